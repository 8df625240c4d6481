; @desc: many distinct emulator call sites over D8..DF opcodes (FADD FMUL FSUB FDIV FLD FST FILD FISTP FXCH FCHS FABS FCOMP FNSTSW), each patched once; the code is re-armed (sites rewritten to CD 3x) and run again 3 times
; @tags: smc.fpu_emu x87.compare
; @budget: 32000
org 100h
%include "lib.inc"
%include "fpemu.inc"
start:
    call crc_init
    call fp_install
    mov bp, 4
.again:
    call fp_arm
    finit
    mov cx, 30
.l:
    mov [iv], cx
    FP fild word [iv]            ; DF
    FP fld dword [f15]           ; D9
    FP fmul st0, st1             ; D8
    FP fadd qword [d25]          ; DC
    FP fsub dword [f15]          ; D8 /4
    FP fidiv word [two]          ; DE
    FP fchs                      ; D9
    FP fabs                      ; D9
    FP fxch st1                  ; D9
    FP fcomp st1                 ; D8
    FP fnstsw ax                 ; DF E0
    and ax, 4500h
    mov [sw], ax
    FP fimul dword [mul7]          ; DA
    FP fistp dword [res]         ; DB
    FPW
    mov eax, [res]
    call crc_dword
    mov ax, [sw]
    call crc_word
    loop .l
    dec bp
    jnz .again
    call fp_remove
    mov ax, [cs:fp_hits]
    call crc_word
    jmp print_crc_exit
iv: dw 0
two: dw 2
sw: dw 0
mul7: dd 7
res: dd 0
f15: dd 1.5
d25: dq 2.5
%include "fpemucode.inc"
