; @desc: odd-only word-flag sieve to 60000 with SIB-addressed word stores and a running prime sum in 32 bits
; @tags: kernel.sieve arith.real32_sib
; @budget: 470000
org 100h
%include "lib.inc"
M equ 30000                 ; index i represents 2i+1
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    xor di, di
    mov cx, M
    xor ax, ax
    cld
    rep stosw
    mov esi, 1
.p: mov eax, esi
    lea ebx, [eax*2 + 1]    ; p
    mov eax, ebx
    mul ebx
    shr eax, 1              ; index of p*p
    cmp eax, M
    jae .done
    cmp word [es:esi*2], 0
    jne .n
.m: mov word [es:eax*2], 1
    add eax, ebx
    cmp eax, M
    jb .m
.n: inc esi
    jmp .p
.done:
    mov edx, 2
    mov esi, 1
.s: cmp word [es:esi*2], 0
    jne .x
    lea eax, [esi*2 + 1]
    add edx, eax
.x: inc esi
    cmp esi, M
    jb .s
    mov eax, edx
    call crc_dword
    jmp print_crc_exit
