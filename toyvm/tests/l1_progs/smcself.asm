; SMC inside the running block: each iteration patches the immediate of the
; instruction right after the store (same block), then one far ahead.
; Expect BL = 5+4+3+2+1 = 15, DX = 0 (INC DX turned into NOP), SI = 7.
        org 100h
        mov cx, 5
        xor bx, bx
        xor dx, dx
again:  mov byte [patch+1], cl
patch:  mov al, 0
        add bl, al
        loop again
        mov byte [ahead], 90h
        mov si, 7
        nop
        nop
ahead:  inc dx
        int 20h
