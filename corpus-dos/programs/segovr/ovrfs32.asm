; @desc: FS/GS with 32-bit addressing and SIB, MOV Sreg from registers and memory, PUSH/POP FS/GS, LFS/LGS far pointer loads
; @tags: mem.seg_override mem.fs_gs arith.real32_sib
; @budget: 16000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 2000h
    mov [fp1 + 2], ax
    add ax, 1000h
    mov [fp2 + 2], ax
    xor ebx, ebx
    xor esi, esi
    lfs bx, [fp1]
    lgs si, [fp2]
    xor ecx, ecx
.f:
    mov eax, ecx
    imul eax, eax, 2654435761
    mov [fs:ebx + ecx*4], eax
    not eax
    mov [gs:esi + ecx*4], eax
    inc ecx
    cmp ecx, 64
    jb .f
    push fs
    push gs
    pop fs
    pop gs                  ; swapped
    xor ecx, ecx
    xor edx, edx
.s:
    mov eax, [gs:ebx + ecx*4]     ; GS now holds the first area
    add edx, eax
    xor edx, [fs:esi + ecx*4 + 0]
    rol edx, 3
    mov [fs:esi + ecx*2 + 512], dx
    inc ecx
    cmp ecx, 64
    jb .s
    mov eax, edx
    call crc_dword
    mov ax, fs
    sub ax, [fp1 + 2]
    call crc_word
    push ds
    push fs
    pop ds
    mov si, 0                   ; the bytes written: 0..255 and 512..639
    mov cx, 256
    call crc_buf
    mov si, 512
    mov cx, 128
    call crc_buf
    pop ds
    jmp print_crc_exit
fp1: dw 0, 0
fp2: dw 0, 0
