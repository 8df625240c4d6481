; @desc: a tiny compiler: a bytecode program (push-constant/add/mul/xor/shift ops) is translated to x86 in a buffer segment and executed by far call, for 30 programs; results checked
; @tags: smc.buffer_exec cf.far_call cf.jump_table
; @budget: 47000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    mov [fp + 2], ax
    mov word [seed], 1
    mov bp, 30
.prog:
    xor di, di
    mov al, 0B8h            ; mov ax, imm16
    stosb
    call rnd
    stosw
    mov cx, 40
.op:
    call rnd
    mov bl, al
    and bx, 3
    shl bx, 1
    call [emit + bx]
    loop .op
    mov al, 0CBh
    stosb
    call far [fp]
    call crc_word
    dec bp
    jnz .prog
    jmp print_crc_exit
rnd:                         ; ax = next LCG value (preserves others)
    mov ax, [seed]
    imul ax, ax, 25173
    add ax, 13849
    mov [seed], ax
    ret
emit: dw e_add, e_imul, e_xor, e_shl
e_add:  mov al, 05h          ; add ax, imm16
    stosb
    call rnd
    stosw
    ret
e_imul: mov ax, 0C069h       ; imul ax, ax, imm16 (69 C0 iw)
    stosw
    call rnd
    or al, 1
    stosw
    ret
e_xor:  mov al, 35h          ; xor ax, imm16
    stosb
    call rnd
    stosw
    ret
e_shl:  mov ax, 0C0C1h       ; rol ax, imm8 (C1 C0 ib)
    stosw
    call rnd
    and al, 15
    stosb
    ret
seed: dw 0
fp: dw 0, 0
