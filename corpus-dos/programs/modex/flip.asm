; @desc: mode X (unchained 320x240: sequencer memory mode 06h, CRTC underline/mode 0/E3h, 240-line timings): draws two pages through the map mask, flips with CRTC start address 0Ch/0Dh, reads all planes back (read map select) for the CRC
; @tags: video.modex_flip video.vga_write_modes
; @budget: 1500000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 13h
    int 10h
    mov dx, 3C4h
    mov ax, 0604h               ; chain-4 off
    out dx, ax
    mov dx, 3C2h
    mov al, 0E3h
    out dx, al
    mov dx, 3D4h
    mov ax, 0011h               ; unprotect CRTC 0-7
    out dx, ax
    mov si, crtc
    mov cx, 9
.c: lodsw
    out dx, ax
    loop .c
    mov ax, 0E317h
    out dx, ax
    push word 0A000h
    pop es
    ; page 0 at 0000, page 1 at 4B00h (80*240)
    xor bp, bp                  ; page
.page:
    xor bx, bx                  ; y
.y: xor cx, cx                  ; x
.x: mov ax, cx
    and al, 3
    mov ah, 1
    push cx
    mov cl, al
    shl ah, cl
    pop cx
    mov al, 2
    mov dx, 3C4h
    out dx, ax                  ; map mask = plane x&3
    mov ax, bx
    imul ax, ax, 80
    mov di, cx
    shr di, 2
    add di, ax
    add di, [pages + bp]
    mov al, cl
    xor al, bl
    add ax, bp
    mov [es:di], al
    add cx, 3
    cmp cx, 320
    jb .x
    add bx, 5
    cmp bx, 240
    jb .y
    ; flip: show this page
    mov dx, 3D4h
    mov al, 0Ch
    mov ah, [pages + bp + 1]
    out dx, ax
    mov al, 0Dh
    mov ah, [pages + bp]
    out dx, ax
    add bp, 2
    cmp bp, 4
    jb .page
    call planes_crc
    jmp print_crc_exit
planes_crc:
    push ds
    xor bx, bx
.pl:
    mov dx, 3CEh
    mov al, 4
    mov ah, bl
    out dx, ax                  ; read map select
    push word 0A000h
    pop ds
    xor si, si
    mov cx, 9600h
    call crc_buf
    inc bx
    cmp bx, 4
    jb .pl
    pop ds
    ret
pages: dw 0, 4B00h
crtc: dw 0D06h, 3E07h, 4109h, 0EA10h, 0AC11h, 0DF12h, 0014h, 0E715h, 0616h
    ; (9 pairs; 17h = E3h set below)
