; @desc: text mode through the BIOS: INT 10h teletype (0Eh) incl. CR/LF/backspace, write char+attribute (09h), cursor positioning (02h), scroll up/down windows (06h/07h); CRC of B800:0000..0F9F
; @tags: video.text_bios
; @budget: 50000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 3
    int 10h
    mov si, text
.t: lodsb
    test al, al
    jz .d
    mov ah, 0Eh
    mov bx, 0007h
    int 10h
    jmp .t
.d: mov cx, 10
.a: mov ah, 2
    xor bh, bh
    mov dh, cl
    mov dl, cl
    add dl, 20
    int 10h
    mov ah, 9
    mov al, 'A'
    add al, cl
    mov bl, cl
    or bl, 10h
    push cx
    mov cx, 5
    int 10h
    pop cx
    loop .a
    mov ax, 0603h               ; scroll up 3 lines, window (2,10)-(12,60)
    mov bh, 2Eh
    mov cx, 020Ah
    mov dx, 0C3Ch
    int 10h
    mov ax, 0702h               ; scroll down 2 lines
    mov bh, 47h
    mov cx, 0500h
    mov dx, 104Fh
    int 10h
    push ds
    push word 0B800h
    pop ds
    xor si, si
    mov cx, 4000
    call crc_buf
    pop ds
    mov ax, 3                   ; leave a clean screen for the checksum line
    int 10h
    jmp print_crc_exit
text: db 'corpus-dos BIOS teletype', 13, 10, 'line two', 8, 8, 'XY', 13, 10
%rep 30
    db 'scrolling line ', 13, 10
%endrep
    db 0
