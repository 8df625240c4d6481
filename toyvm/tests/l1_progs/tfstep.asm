; Single-step mode: TF set through POPF, an INT 1 handler counting traps,
; TF cleared by the handler after 20 traps.
        org 100h
        xor ax, ax
        mov es, ax
        mov word [es:4], trap
        mov [es:6], cs
        pushf
        pop ax
        or ax, 100h
        push ax
        popf
        mov cx, 50
lp:     add dx, cx
        loop lp
        int 20h
trap:   inc word [n]
        cmp word [n], 20
        jb .r
        push bp
        mov bp, sp
        and word [bp+6], 0FEFFh
        pop bp
.r:     iret
n:      dw 0
