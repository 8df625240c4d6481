; Wait for interrupts with JMP $ and with a memory poll; the ISR advances a
; counter. Exit after the third interrupt.
        org 100h
        mov ax, 0
        mov es, ax
        mov word [es:41h*4], isr
        mov [es:41h*4+2], cs
        sti
w1:     cmp word [count], 1
        jb w1
        mov ax, [count]
w2:     cmp ax, [count]
        je w2
        mov bx, 1234h
        jmp $
isr:    inc word [count]
        cmp word [count], 3
        jae done
        iret
done:   int 20h
count:  dw 0
