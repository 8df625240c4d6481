; @desc: 1024-bit two's complement arithmetic in 32-bit limbs: SBB chains (x - y, 0 - x), borrow across all limbs, ADC to undo
; @tags: arith.adc_sbb_mem arith.real32_sib
; @budget: 130000
org 100h
%include "lib.inc"
N equ 32
start:
    call crc_init
    ; fill x with an LCG, y with another
    mov eax, 12345678h
    xor bx, bx
.fill:
    imul eax, eax, 1103515245
    add eax, 12345
    mov [x + bx], eax
    rol eax, 7
    mov [y + bx], eax
    add bx, 4
    cmp bx, N*4
    jb .fill
    mov bp, 200
.round:
    ; x = x - y (sbb chain, 32-bit limbs, index addressing with esi*4)
    xor esi, esi
    mov cx, N
    clc
.s1:
    mov eax, [y + esi*4]
    sbb [x + esi*4], eax
    inc esi
    loop .s1
    ; record the final borrow
    setc al
    call crc_byte
    ; y = 0 - y (negate through sbb from zero)
    xor esi, esi
    mov cx, N
    clc
.s2:
    mov eax, 0
    sbb eax, [y + esi*4]
    mov [y + esi*4], eax
    inc esi
    loop .s2
    ; x = x + (x >> 1 limb) with adc: mixes the halves
    xor esi, esi
    mov cx, N - 1
    clc
.s3:
    mov eax, [x + esi*4 + 4]
    adc [x + esi*4], eax
    inc esi
    loop .s3
    adc dword [x + esi*4], 0
    dec bp
    jnz .round
    mov si, x
    mov cx, N*8
    call crc_buf
    jmp print_crc_exit
align 4
x: times N dd 0
y: times N dd 0
