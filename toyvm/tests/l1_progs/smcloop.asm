; A loop that patches its own operand on every iteration (volatile code):
; the immediate of ADD DX,imm16 is rewritten each time. 2000 iterations.
; Expect DX = sum of (i*3 & 0xFFFF) for i = 2000..1, mod 65536; BP = 2000.
        org 100h
        mov cx, 2000
        xor dx, dx
        xor bp, bp
top:    mov ax, cx
        imul ax, ax, 3
        mov [imm+2], ax
imm:    add dx, 1234h
        inc bp
        loop top
        int 20h
