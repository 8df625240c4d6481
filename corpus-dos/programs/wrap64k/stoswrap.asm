; @desc: REP STOSB/STOSW and LODSB/SCASB that wrap DI/SI through 0000/FFFF in both directions
; @tags: mem.wrap64k mem.rep_string mem.rep_df1
; @budget: 13000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    mov di, 0FFC0h
    mov cx, 64
    xor ax, ax
    cld
    rep stosw               ; FFC0..003F zeroed (wraps)
    std
    mov di, 0006h
    mov cx, 9
    mov ax, 0A55Ah
    rep stosw               ; 0006 down through FFFE..FFF6
    mov ax, di
    call crc_word
    cld
    mov di, 0FFFDh
    mov cx, 7
    mov al, 77h
    rep stosb               ; FFFD..0003
    mov ax, di
    call crc_word
    ; LODSB across the wrap, summing
    push es
    pop ds
    mov si, 0FFF0h
    mov cx, 32
    xor bx, bx
.l:
    lodsb
    add bl, al
    adc bh, 0
    loop .l
    mov ax, bx
    call crc_word
    mov ax, si
    call crc_word
    ; REPNE SCASB backwards across the wrap, looking for 77h
    std
    mov di, 0010h
    mov cx, 100
    mov al, 77h
    repne scasb
    pushf
    cld
    mov ax, di
    call crc_word
    mov ax, cx
    call crc_word
    pop ax
    and ax, 08D5h
    call crc_word
    mov si, 0FFC0h
    mov cx, 64
    call crc_buf
    xor si, si
    mov cx, 64
    call crc_buf
    push cs
    pop ds
    jmp print_crc_exit
