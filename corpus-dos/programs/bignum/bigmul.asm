; @desc: schoolbook multiplication of 256-bit numbers in 16-bit limbs (MUL r/m16, ADD/ADC into a 512-bit product), squared repeatedly mod 2^512
; @tags: arith.adc_sbb_mem arith.muldiv
; @budget: 68000
org 100h
%include "lib.inc"
N equ 16
start:
    call crc_init
    mov cx, N
    mov di, a
    mov ax, 0BEEFh
.fill:
    mov [di], ax
    add ax, 3C5Ah
    rol ax, 3
    add di, 2
    loop .fill
    mov bp, 12
.round:
    ; p = a * a (N x N limbs -> 2N)
    mov di, p
    mov cx, 2*N
    xor ax, ax
    rep stosw
    xor si, si              ; i*2
.i:
    xor bx, bx              ; j*2
    xor cx, cx              ; carry limb
.j:
    mov ax, [a + si]
    mul word [a + bx]
    add ax, cx
    adc dx, 0
    mov di, si
    add di, bx
    add [p + di], ax
    adc dx, 0
    mov cx, dx
    add bx, 2
    cmp bx, 2*N
    jb .j
    mov di, si
    add di, 2*N
    add [p + di], cx        ; top limb of this row (no carry out beyond: fits)
    add si, 2
    cmp si, 2*N
    jb .i
    mov si, p
    mov cx, 4*N
    call crc_buf
    ; a = low half of p xor high half (keeps the numbers dense)
    xor bx, bx
.mix:
    mov ax, [p + bx]
    xor ax, [p + bx + 2*N]
    or ax, 1
    mov [a + bx], ax
    add bx, 2
    cmp bx, 2*N
    jb .mix
    dec bp
    jnz .round
    jmp print_crc_exit
a: times N dw 0
p: times 2*N dw 0
