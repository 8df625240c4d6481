; REP MOVSB over 6000 bytes with interrupts landing between elements; the
; ISR counts them and stamps the count into the destination.
        org 100h
        mov ax, 0
        mov es, ax
        mov word [es:40h*4], isr
        mov [es:40h*4+2], cs
        push cs
        pop es
        sti
        mov si, src
        mov di, 8000h
        mov cx, 6000
        cld
        rep movsb
        mov cx, 300
        mov al, 5
        mov di, 0C000h
        rep stosb
        mov cx, 200
        mov si, src
        mov di, 8000h
        repe cmpsb
        int 20h
isr:    inc word [count]
        push ax
        mov ax, [count]
        mov [es:di], al
        pop ax
        iret
count:  dw 0
src:    times 64 db 1, 2, 3, 4
