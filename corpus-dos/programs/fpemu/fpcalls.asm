; @desc: emulator call sites inside a subroutine reached from two call sites and a far-called copy; the first call patches, the rest run native; checks fp_hits
; @tags: smc.fpu_emu cf.deep_calls
; @budget: 23000
org 100h
%include "lib.inc"
%include "fpemu.inc"
start:
    call crc_init
    call fp_install
    call fp_arm
    finit
    mov cx, 50
.l:
    mov [n], cx
    call poly
    call crc_dword
    mov ax, cx
    xor ax, 55h
    mov [n], ax
    call poly
    call crc_dword
    loop .l
    call fp_remove
    mov ax, [cs:fp_hits]
    call crc_word
    jmp print_crc_exit
poly:                            ; eax = 3n^2 - 5n + 11 computed on the x87
    FP fild word [n]
    FP fld st0
    FP fmul st0, st1
    FP fimul word [c3]
    FP fxch st1
    FP fimul word [c5]
    FP fsubp st1, st0
    FP fiadd word [c11]
    FP fistp dword [r]
    FPW
    mov eax, [r]
    ret
n: dw 0
c3: dw 3
c5: dw 5
c11: dw 11
r: dd 0
%include "fpemucode.inc"
