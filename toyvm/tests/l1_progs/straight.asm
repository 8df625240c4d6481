; A long straight line (one block up to the size cap) run under every
; budget and with an interrupt at every dispatch.
        org 100h
        xor ax, ax
        mov es, ax
        mov word [es:43h*4], isr
        mov [es:43h*4+2], cs
        sti
        mov cx, 3
outer:
%rep 80
        add ax, bx
        xor bx, 5A5Ah
        rol ax, 1
        inc dx
%endrep
        dec cx
        jnz outer
        int 20h
isr:    add di, 3
        iret
