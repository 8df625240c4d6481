; @desc: display-enable polling on 3DAh bit 0: counts scanline transitions during 3 frames (mode 13h); prints whether the count is in a plausible range
; @tags: wait.display_enable wait.retrace video.mode13h
; @timing: dependent
; @budget: 280000
org 100h
%include "lib.inc"
start:
    mov ax, 13h
    int 10h
    mov dx, 3DAh
.v0: in al, dx
    test al, 8
    jz .v0
.v1: in al, dx
    test al, 8
    jnz .v1
    xor bx, bx                  ; hsync count
    mov cx, 3
.fr:
.h0: in al, dx
    test al, 8
    jnz .fe
    test al, 1
    jz .h0
.h1: in al, dx
    test al, 8
    jnz .fe
    test al, 1
    jnz .h1
    inc bx
    jmp .h0
.fe: in al, dx
    test al, 8
    jnz .fe
    loop .fr
    mov ax, 3
    int 10h
    cmp bx, 300
    jb .bad
    PRINT 'DISPLAY ENABLE OK'
    EXIT 0
.bad:
    PRINT 'DISPLAY ENABLE LOW'
    EXIT 0
