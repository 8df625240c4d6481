; @desc: BSWAP, XADD (r and m, 8/16/32) and CMPXCHG (equal and not-equal paths, r and m): values and flags
%define CPU 586 ; nasm files CMPXCHG under 586; the code uses only 486 instructions
; @tags: arith.bitops
; @budget: 270000
; @expect: CHECKSUM E54158D8
; @dosbox-bug: DOSBox 0.74 XADD leaves the status flags stale and CMPXCHG updates only ZF (SF/CF/AF/PF/OF stale); unicorn (QEMU) gives the SDM flags (as ADD and CMP) and the expected value
%define VA dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%define VB dd 0, 1, 7Fh, 80h, 0FFh, 7FFFh, 8000h, 0FFFFh, 7FFFFFFFh, 80000000h, 0FFFFFFFFh, 12345678h, 0EDCBA987h, 00FF00FFh, 0F0F0F0Fh, 80000001h
%macro TESTOP 0
    push eax
    bswap eax
    call crc_dword
    pop eax
    push eax
    push ebx
    xadd eax, ebx
    FEEDF 08D5h
    call crc_dword
    mov eax, ebx
    call crc_dword
    pop ebx
    pop eax
    push eax
    mov [cs:%%m], ebx
    xadd [cs:%%m], ax
    FEEDF 08D5h
    xadd [cs:%%m+1], al
    FEEDF 08D5h
    call crc_dword
    mov eax, [cs:%%m]
    call crc_dword
    pop eax
    push eax
    mov edx, 5A5A5A5Ah
    cmpxchg ebx, edx
    FEEDF 08D5h
    call crc_dword
    mov eax, ebx
    call crc_dword
    pop eax
    mov [cs:%%m], ecx
    cmpxchg [cs:%%m], bx
    FEEDF 08D5h
    cmpxchg [cs:%%m+2], cl
    FEEDF 08D5h
    call crc_dword
    mov eax, [cs:%%m]
    call crc_dword
    jmp %%o
%%m: dd 0
%%o:
%endmacro
%include "grid.inc"
