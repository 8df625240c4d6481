; @desc: mode 13h fire: an LCG seeds the bottom line, each frame averages four neighbours upward (byte loads with SI-relative addressing), 12 frames; CRC of the frame
; @tags: video.mode13h video.effects
; @budget: 7700000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 13h
    int 10h
    push word 0A000h
    pop es
    push word 0A000h
    pop ds
    mov bp, 12
    mov bx, 1
.frame:
    mov di, 199*320
    mov cx, 320
.seed:
    imul bx, bx, 25173
    add bx, 13849
    mov al, bh
    or al, 80h
    stosb
    loop .seed
    mov si, 100*320
.f: mov al, [si + 320]
    xor ah, ah
    mov dl, [si + 319]
    xor dh, dh
    add ax, dx
    mov dl, [si + 321]
    add ax, dx
    mov dl, [si + 640]
    add ax, dx
    shr ax, 2
    jz .z
    dec ax
.z: mov [si], al
    inc si
    cmp si, 199*320
    jb .f
    dec bp
    jnz .frame
    push cs
    pop ds
    call crc_vram13
    jmp print_crc_exit
