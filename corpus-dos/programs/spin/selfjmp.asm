; @desc: JMP $ (EB FE) spin: the timer ISR rewrites the spin's displacement byte after 3 ticks, releasing it (an IRQ changes the code the CPU is spinning on)
; @tags: wait.selfbranch irq.timer_chain smc.same_block
; @timing: dependent
; @budget: 830000
org 100h
%include "lib.inc"
%macro TIMER_EXTRA 0
    cmp word [cs:ticks], 3
    jb %%n
    mov byte [cs:spin + 1], 0     ; EB FE -> EB 00
%%n:
%endmacro
start:
    call timer_hook
    sti
spin:
    jmp short spin
    call timer_unhook
    PRINT 'SPIN RELEASED'
    EXIT 0
%include "timer.inc"
