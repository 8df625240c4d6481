; @desc: DAC palette: 256 entries written through 3C8h/3C9h, rotated 40 times (read back with 3C7h/3C9h, shifted by one entry, rewritten), final palette read back for the CRC
; @tags: video.palette video.mode13h
; @budget: 300000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 13h
    int 10h
    mov dx, 3C8h
    xor al, al
    out dx, al
    inc dx
    xor cx, cx
.w: mov al, cl
    shr al, 2
    out dx, al
    mov al, cl
    and al, 3Fh
    out dx, al
    mov al, 63
    sub al, cl
    and al, 3Fh
    out dx, al
    inc cx
    cmp cx, 256
    jb .w
    mov bp, 40
.rot:
    mov dx, 3C7h
    xor al, al
    out dx, al
    mov dx, 3C9h
    mov di, pal
    mov cx, 768
.r: in al, dx
    mov [di], al
    inc di
    loop .r
    mov dx, 3C8h
    mov al, 0
    out dx, al
    inc dx
    mov si, pal + 3
    mov cx, 765
.o: lodsb
    out dx, al
    loop .o
    mov si, pal
    mov cx, 3
.o2: lodsb
    out dx, al
    loop .o2
    dec bp
    jnz .rot
    mov dx, 3C7h
    xor al, al
    out dx, al
    mov dx, 3C9h
    mov di, pal
    mov cx, 768
.r2: in al, dx
    mov [di], al
    inc di
    loop .r2
    mov si, pal
    mov cx, 768
    call crc_buf
    jmp print_crc_exit
pal: times 768 db 0
