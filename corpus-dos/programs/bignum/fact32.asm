; @desc: 300! in 32-bit limbs: MUL r32 by a small factor with ADC carry propagation (EDX:EAX) through memory
; @tags: arith.adc_sbb_mem arith.muldiv arith.real32_sib
; @budget: 240000
org 100h
%include "lib.inc"
N equ 64
start:
    call crc_init
    mov dword [num], 1
    mov ebx, 2
.f:
    xor ecx, ecx            ; carry
    xor si, si
.l:
    mov eax, [num + si]
    mul ebx
    add eax, ecx
    adc edx, 0
    mov [num + si], eax
    mov ecx, edx
    add si, 4
    cmp si, N*4
    jb .l
    inc ebx
    cmp ebx, 300
    jbe .f
    mov si, num
    mov cx, N*4
    call crc_buf
    jmp print_crc_exit
align 4
num: times N dd 0
