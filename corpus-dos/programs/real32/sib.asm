; @desc: every SIB shape in real mode: base+index*{1,2,4,8}+disp8/disp32, index without base, ESP and EBP bases (SS default), loads, stores and LEA
; @tags: arith.real32_sib
; @budget: 310000
org 100h
%include "lib.inc"
start:
    call crc_init
    ; table of 256 dwords: t[i] = i * 9E3779B9h
    xor ecx, ecx
    xor eax, eax
.fill:
    mov [tab + ecx*4], eax
    add eax, 9E3779B9h
    inc ecx
    cmp ecx, 256
    jb .fill
    xor edi, edi
.loop:
    mov ebx, tab
    mov esi, edi
    and esi, 31
    mov eax, [ebx + esi*1]
    call crc_dword
    mov eax, [ebx + esi*2 + 4]
    call crc_dword
    mov eax, [ebx + esi*4 + 64]
    call crc_dword
    mov eax, [ebx + esi*8 + 130]
    call crc_dword
    mov eax, [esi*4 + tab + 12]
    call crc_dword
    mov eax, [esi*8 + tab]
    call crc_dword
    lea eax, [esi + esi*4 + 12345678h]
    call crc_dword
    lea eax, [ebx*2 + esi*1]
    call crc_dword
    lea eax, [edi + edi*8]
    call crc_dword
    ; stores through SIB
    mov eax, edi
    imul eax, eax, 01010101h
    mov [ebx + esi*4 + 512], eax
    add [ebx + esi*2 + 513], ax
    xor [ebx + esi + 700], al
    ; ESP-based SIB (SS segment)
    push eax
    push edi
    movzx esp, sp
    mov eax, [esp + 4]
    add eax, [esp]
    call crc_dword
    mov eax, [esp + esi*0 + 4]   ; index none
    call crc_dword
    add esp, 8
    ; EBP-based (SS default) with disp8 and index
    movzx ebp, sp
    sub esp, 16
    movzx esp, sp
    mov ecx, esi
    and ecx, 3
    mov [ebp + ecx*4 - 16], edi
    mov eax, [ebp + ecx*4 - 16]
    add eax, [ebp - 16 + ecx*4]
    call crc_dword
    add esp, 16
    inc edi
    cmp edi, 300
    jb .loop
    mov si, tab
    mov cx, 1024
    call crc_buf
    jmp print_crc_exit
align 4
tab: times 256 dd 0
