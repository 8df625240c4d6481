; @desc: two-instruction spin on a memory variable (CMP [flag],0 / JE back) until the timer ISR sets it after 4 ticks; then a JMP $ inside a loop released by the ISR rewriting the return IP
; @tags: wait.selfbranch irq.timer_chain
; @timing: dependent
; @budget: 1400000
org 100h
%include "lib.inc"
%macro TIMER_EXTRA 0
    cmp word [cs:ticks], 4
    jb %%n
    mov byte [cs:flag], 1
%%n:
%endmacro
start:
    call timer_hook
    sti
.w: cmp byte [flag], 0
    je .w
    call timer_unhook
    ; second phase: JMP $ escaped by an ISR that moves the return IP past it
    xor ax, ax
    mov es, ax
    cli
    mov ax, [es:8*4]
    mov [old8b], ax
    mov ax, [es:8*4 + 2]
    mov [old8b + 2], ax
    mov word [es:8*4], isr2
    mov [es:8*4 + 2], cs
    sti
.s: jmp short .s
.out:
    cli
    mov ax, [old8b]
    mov [es:8*4], ax
    mov ax, [old8b + 2]
    mov [es:8*4 + 2], ax
    sti
    PRINT 'FLAG SEEN, SPIN ESCAPED'
    EXIT 0
isr2:
    push bp
    mov bp, sp
    cmp word [bp + 2], start.s
    jne .c
    mov word [bp + 2], start.out
.c: pop bp
    jmp far [cs:old8b]
flag: db 0
old8b: dd 0
%include "timer.inc"
