; Interrupt shadows: MOV SS and POP SS hold off a pending interrupt for one
; instruction, STI too; HLT waits for the next one.
        org 100h
        xor ax, ax
        mov es, ax
        mov word [es:42h*4], isr
        mov [es:42h*4+2], cs
        mov cx, 40
lp:     mov ax, ss
        mov ss, ax
        mov sp, 0FFF0h
        push ss
        pop ss
        inc bx
        cli
        inc dx
        sti
        inc si
        loop lp
        hlt
        hlt
        int 20h
isr:    inc di
        iret
