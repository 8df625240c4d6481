; @desc: Fibonacci numbers to F(700) as 512-bit integers in 16-bit limbs: ADC chains through memory with LODSW/ADC [DI] and LOOP
; @tags: arith.adc_sbb_mem mem.rep_string
; @budget: 330000
org 100h
%include "lib.inc"
LIMBS equ 32
start:
    call crc_init
    mov word [fa], 0
    mov word [fb], 1
    mov bp, 700
.step:                      ; fa += fb ; swap roles by copying
    mov si, fb
    mov di, fa
    mov cx, LIMBS
    clc
.add:
    lodsw
    adc [di], ax
    inc di                  ; INC keeps CF
    inc di
    loop .add
    ; swap fa/fb via xchg loop
    mov si, fa
    mov di, fb
    mov cx, LIMBS
.sw:
    mov ax, [si]
    xchg ax, [di]
    mov [si], ax
    add si, 2
    add di, 2
    loop .sw
    dec bp
    jnz .step
    mov si, fa
    mov cx, LIMBS*4
    call crc_buf
    jmp print_crc_exit
fa: times LIMBS dw 0
fb: times LIMBS dw 0
