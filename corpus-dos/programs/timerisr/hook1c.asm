; @desc: INT 1Ch user-tick hook (called by the BIOS IRQ0 handler) plus an INT 08h hook that chains with PUSHF/CALL FAR; both counters must move in step over 6 ticks
; @tags: irq.timer_chain int.hook_chain
; @timing: dependent
; @budget: 1700000
org 100h
%include "lib.inc"
start:
    xor ax, ax
    mov es, ax
    cli
    mov eax, [es:1Ch*4]
    mov [old1c], eax
    mov eax, [es:8*4]
    mov [old8], eax
    mov word [es:1Ch*4], h1c
    mov [es:1Ch*4 + 2], cs
    mov word [es:8*4], h8
    mov [es:8*4 + 2], cs
    sti
.l: cmp word [n1c], 6
    jb .l
    cli
    mov eax, [old1c]
    mov [es:1Ch*4], eax
    mov eax, [old8]
    mov [es:8*4], eax
    sti
    mov ax, [n8]
    sub ax, [n1c]
    cmp ax, 1
    ja .bad
    PRINT 'INT 1C AND 08 IN STEP'
    EXIT 0
.bad:
    PRINT 'OUT OF STEP'
    EXIT 1
h8: inc word [cs:n8]
    pushf
    call far [cs:old8]
    iret
h1c: inc word [cs:n1c]
    iret
old8: dd 0
old1c: dd 0
n8: dw 0
n1c: dw 0
