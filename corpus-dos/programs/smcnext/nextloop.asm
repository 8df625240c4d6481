; @desc: a loop body that patches its own next instruction every iteration with a 32-bit store (ADD EDX,imm8 <-> SUB EDX,imm8 with new immediates), 4 bytes ahead of the store
; @tags: smc.same_block arith.real32_sib
; @budget: 45000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ecx, 2000
    xor edx, edx
.l:
    mov eax, ecx
    and eax, 7Fh
    shl eax, 16
    test cl, 1
    jz .sub
    or eax, 0C283h + 66h*0          ; 66 83 C2 ib  = add edx, ib (bytes: 66 83 C2 ib)
    jmp .st
.sub:
    or eax, 0EA83h                  ; 66 83 EA ib  = sub edx, ib
.st:
    shl eax, 8
    mov al, 66h
    mov [cs:.site], eax
.site:
    add edx, strict byte 1
    rol edx, 3
    dec ecx
    jnz .l
    mov eax, edx
    call crc_dword
    jmp print_crc_exit
