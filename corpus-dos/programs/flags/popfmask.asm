; @desc: POPF of 16-bit images with every status/control bit pattern (TF never set): which bits stick (reserved bit 1 reads 1, bits 3 5 15 read 0, IOPL/NT writable in real mode on a 386+)
; @tags: flags.pushf_popf_cli_sti_iret
; @budget: 60000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 1024
    mov dx, 1
.l:
    imul dx, dx, 2053
    add dx, 13849
    mov ax, dx
    and ax, 0FEFFh          ; never TF
    or ax, 0200h            ; keep interrupts on
    push ax
    popf
    pushf
    pop ax
    call crc_word
    loop .l
    push word 0202h
    popf
    jmp print_crc_exit
