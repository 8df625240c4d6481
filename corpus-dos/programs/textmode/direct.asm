; @desc: text mode 3 by direct B800h writes: characters and attributes in words, a REP STOSW fill, a scrolled copy with REP MOVSW (overlapping, backward); CRC of the 4000-byte screen
; @tags: video.text_direct mem.rep_string mem.rep_df1
; @budget: 67000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 3
    int 10h
    push word 0B800h
    pop es
    xor di, di
    mov cx, 2000
    mov ax, 1F20h
    cld
    rep stosw
    xor di, di
    mov cx, 2000
    mov bx, 0
.w: mov al, bl
    and al, 63
    add al, 32
    mov ah, bl
    shr ah, 2
    stosw
    inc bx
    loop .w
    push ds
    push es
    pop ds
    std
    mov si, 3998 - 160
    mov di, 3998
    mov cx, 1920
    rep movsw
    cld
    xor si, si
    mov cx, 4000
    call crc_buf
    pop ds
    jmp print_crc_exit
