; @desc: mode 13h plasma: three table sines summed per pixel (sine table built with an integer parabola), 4 frames with moving phases; CRC of the last frame
; @tags: video.mode13h video.effects
; @budget: 6000000
org 100h
%include "lib.inc"
start:
    call crc_init
    xor bx, bx                  ; sine-ish table: s(i) = 4*i*(128-i)/128 for i<128, mirrored
.t: mov ax, bx
    and ax, 127
    mov cx, 128
    sub cx, ax
    mul cx
    shr ax, 5
    test bl, 128
    jz .p
    neg al
.p: mov [sint + bx], al
    inc bx
    cmp bx, 256
    jb .t
    mov ax, 13h
    int 10h
    push word 0A000h
    pop es
    mov bp, 4
.frame:
    xor di, di
    xor dx, dx                  ; y
.y: xor cx, cx                  ; x
.x: mov bx, cx
    add bx, [phase]
    and bx, 255
    mov al, [sint + bx]
    mov bx, dx
    shl bx, 1
    add bx, [phase]
    and bx, 255
    add al, [sint + bx]
    mov bx, cx
    add bx, dx
    and bx, 255
    add al, [sint + bx]
    stosb
    inc cx
    cmp cx, 320
    jb .x
    inc dx
    cmp dx, 200
    jb .y
    add word [phase], 9
    dec bp
    jnz .frame
    call crc_vram13
    jmp print_crc_exit
phase: dw 0
sint: times 256 db 0
