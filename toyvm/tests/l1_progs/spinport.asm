; Retrace waits on port 3DAh (bit 3), a display-enable wait (bit 0), a
; masked AND poll, and a CMP poll against a register; BX counts frames.
        org 100h
        mov dx, 3DAh
        mov cx, 6
frame:
w1:     in al, dx
        test al, 8
        jnz w1
w2:     in al, dx
        test al, 8
        jz w2
        inc bx
        loop frame
        mov ah, 0
w3:     in al, dx
        and al, 8
        cmp al, ah
        je w3
w4:     in al, dx
        test al, 1
        jnz w4
        mov si, ax
w5:     in al, 40h
        cmp al, 7
        jne w5
        int 20h
