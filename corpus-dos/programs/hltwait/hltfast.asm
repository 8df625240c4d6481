; @desc: PIT channel 0 reprogrammed to ~1165 Hz (divisor 1024), own IRQ0 handler counts and chains to the BIOS every 64th tick (EOI itself otherwise); HLT loop until 200 fast ticks; PIT restored
; @tags: wait.hlt irq.timer_chain
; @timing: dependent
; @budget: 860000
org 100h
%include "lib.inc"
start:
    xor ax, ax
    mov es, ax
    cli
    mov ax, [es:8*4]
    mov [old8], ax
    mov ax, [es:8*4 + 2]
    mov [old8 + 2], ax
    mov word [es:8*4], isr
    mov [es:8*4 + 2], cs
    mov al, 36h
    out 43h, al
    mov al, 0
    out 40h, al
    mov al, 4
    out 40h, al                 ; divisor 0400h
    sti
.l: hlt
    cmp word [fast], 200
    jb .l
    cli
    mov al, 36h
    out 43h, al
    xor al, al
    out 40h, al
    out 40h, al                 ; divisor 65536
    mov ax, [old8]
    mov [es:8*4], ax
    mov ax, [old8 + 2]
    mov [es:8*4 + 2], ax
    sti
    PRINT 'FAST TICKS 200'
    EXIT 0
isr:
    inc word [cs:fast]
    test word [cs:fast], 63
    jz .chain
    push ax
    mov al, 20h
    out 20h, al
    pop ax
    iret
.chain:
    jmp far [cs:old8]
fast: dw 0
old8: dd 0
