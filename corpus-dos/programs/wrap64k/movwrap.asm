; @desc: REP MOVSB/MOVSW whose SI and DI wrap at 64 KiB inside their segments (SI from FFF0h, DI from FFE0h), forward and backward
; @tags: mem.wrap64k mem.rep_string mem.rep_df1
; @budget: 14000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov ds, ax              ; scratch source segment
    add ax, 1000h
    mov es, ax              ; scratch destination segment
    ; source: bytes FFC0..FFFF and 0000..003F get a pattern
    mov si, 0FFC0h
    mov cx, 128
    mov al, 11h
.f:
    mov [si], al
    add al, 13
    inc si                  ; wraps FFFF -> 0000
    loop .f
    ; clear destination windows
    mov di, 0FFC0h
    mov cx, 128
    xor al, al
.c:
    mov [es:di], al
    inc di
    loop .c
    cld
    mov si, 0FFF0h
    mov di, 0FFE0h
    mov cx, 40
    rep movsb               ; SI wraps after 16, DI after 32
    mov ax, si
    call crc_word
    mov ax, di
    call crc_word
    std
    mov si, 0008h
    mov di, 0004h
    mov cx, 20
    rep movsw               ; backwards through 0000 -> FFFE
    cld
    mov ax, si
    call crc_word
    mov ax, di
    call crc_word
    push es
    pop ds
    mov si, 0FFC0h
    mov cx, 64
    call crc_buf            ; FFC0..FFFF
    xor si, si
    mov cx, 64
    call crc_buf            ; 0000..003F
    push cs
    pop ds
    jmp print_crc_exit
