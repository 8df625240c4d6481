; @desc: 16-colour planar mode 0Dh (320x200): per-plane writes through the map mask (SEQ 02h) of bars and a diagonal pattern, then plane read-back for the CRC
; @tags: video.planar16
; @budget: 500000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 0Dh
    int 10h
    push word 0A000h
    pop es
    mov bx, 1
.plane:
    mov dx, 3C4h
    mov al, 2
    mov ah, bl
    out dx, ax
    xor di, di
    mov cx, 8000
.w: mov ax, di
    mul bl
    xor al, ah
    add al, bl
    stosb
    loop .w
    shl bl, 1
    cmp bl, 16
    jb .plane
    push ds
    xor bx, bx
.pl: mov dx, 3CEh
    mov al, 4
    mov ah, bl
    out dx, ax
    push word 0A000h
    pop ds
    xor si, si
    mov cx, 8000
    call crc_buf
    inc bx
    cmp bx, 4
    jb .pl
    pop ds
    jmp print_crc_exit
