; @desc: 32-bit addressing forms in real mode with DS != SS: every mod/rm base, disp8/disp32, SIB with scales 1-8, no-base SIB (disp32 + index, DS even for EBP as index), EBP/ESP bases defaulting to SS, [ebp+eax] (SS) vs [eax+ebp] (DS), negative indexes and 32-bit wraparound of base+index+disp, overrides on 32-bit forms, LEA truncation both ways, loads, stores, RMW, XCHG, PUSH/POP m32; CRC of the values and both data areas
; @tags: arith.real32_sib mem.ea32 mem.seg_override
; @budget: 200000
org 100h
%include "lib.inc"
; register values for every test (setregs); EBP points at sarea (in SS = CS)
R_EAX equ 00000100h
R_ECX equ 00000003h
R_EDX equ 00000800h
R_EBX equ 00000400h
R_ESI equ 00000020h
R_EDI equ 00000011h

%macro T 1+                     ; load a dword through the form, feed it
    call setregs
    mov edx, %1
    mov eax, edx
    call crc_dword
%endmacro
%macro S 1+                     ; run a store / RMW form, feed EAX..EDX after
    call setregs
    %1
    call feedregs
%endmacro

start:
    call crc_init
    cld                         ; DF is not defined at entry
    movzx esp, sp
    ; D segment (CS+1000h): D[i] = i*73 + (i >> 8)*5 for 0..1FFFh
    mov ax, cs
    add ax, 1000h
    mov ds, ax
    xor bx, bx
.d: mov ax, bx
    mov cl, 73
    mul cl
    mov cx, bx
    shr cx, 8
    imul cx, cx, 5
    add ax, cx
    mov [bx], al
    inc bx
    cmp bx, 2000h
    jb .d
    ; sarea (in SS): sarea[i] = 255 - 3*i
    xor bx, bx
.s: mov al, bl
    imul ax, ax, -3
    dec al
    mov [ss:sarea + bx], al
    inc bx
    cmp bx, 256
    jb .s

    ; mod 00 bases and disp32
    T [eax]
    T [ecx]
    T [edx]
    T [ebx]
    T [esi]
    T [edi]
    T [dword 1234h]
    ; EBP / ESP bases: SS
    T [ebp]
    T [ebp + 7]
    T [ebp + 1FFh - 100h]
    T [dword ebp + 20h]
    T [ebp + ecx*4]
    T [ebp + eax]               ; SIB base EBP: SS
    T [eax + ebp]               ; SIB index EBP: DS
    T [nosplit ebp*1 + 10h]     ; no base, index EBP: DS
    T [nosplit ebp*2 + 0]
    ; SIB scales, disp8 and disp32
    T [ebx + esi]
    T [ebx + esi*2 + 5]
    T [eax + ecx*4 - 3]
    T [edx + edi*8 + 0FFh]
    T [ebx + ecx*8 + 1234h]
    T [esi*4 + 100h]
    T [edi*2 + 1E00h]
    ; negative index and 32-bit wraparound
    call setregs
    mov ecx, -16
    mov eax, [ebx + ecx*4 + 8]
    call crc_dword
    call setregs
    mov ebx, 0FFFFF000h
    mov eax, [ebx + 1010h]      ; (FFFFF000 + 1010) mod 2^32 = 10h
    call crc_dword
    call setregs
    mov esi, 80000000h
    mov eax, [esi*2 + edi + 30h] ; esi*2 overflows to 0
    call crc_dword
    call setregs
    mov edi, -1
    mov eax, [edx + edi*8 + 9]  ; 800h - 8 + 9
    call crc_dword
    ; overrides on 32-bit forms
    T [ss:eax + 40h]            ; DS form read through SS (sarea side is CS: offset 140h)
    T [ds:ebp + 4]              ; SS default overridden to DS
    T [cs:esi*4 + sarea]
    call setregs
    mov ax, ds
    mov fs, ax
    mov gs, ax
    T [fs:ebp + ebx]
    T [gs:esp - 0F000h]         ; GS with ESP: (FFFEh - F000h) mod 2^32, in D
    ; LEA: 32-bit address, 16-bit destination and the reverse
    call setregs
    lea ax, [ebx + esi*4 + 1FFFFh]
    call crc_word
    lea eax, [ebx + ecx*8 + 12345678h]
    call crc_dword
    lea eax, [bx + si - 1000h]  ; 16-bit address wraps (420h - 1000h), zero-extended
    call crc_dword
    lea eax, [ebp + eax*2 - 1]
    call crc_dword
    ; stores and read-modify-write
    S mov [ebx + esi*2 + 1], eax
    S add [eax + ecx*4], edx
    S sub word [ebp + 2], cx     ; SS
    S xor [eax + ebp + 2], ebx   ; DS
    S inc byte [dword 0ABCh]
    S xchg [ebp + edi], ecx      ; SS
    S xchg [nosplit edi*4 + 200h], esi
    S movzx eax, word [esi*8 + 3]
    S movsx edx, byte [ebx + edx*2 - 1]
    S shl dword [edx + ecx], cl
    call setregs
    push dword 0A5A5F00Dh
    push dword [esp]            ; SS:ESP form reads what was just pushed
    pop dword [ebx + 10h]
    pop edx
    call feedregs
    call setregs
    push dword [ebp + 8]
    pop dword [esi + edi*4]
    call feedregs
    ; CRC both areas after the stores
    xor si, si
    mov cx, 2000h
    call crc_buf
    push ss
    pop ds
    mov si, sarea
    mov cx, 256
    call crc_buf
    jmp print_crc_exit

setregs:
    mov eax, R_EAX
    mov ecx, R_ECX
    mov edx, R_EDX
    mov ebx, R_EBX
    mov esi, R_ESI
    mov edi, R_EDI
    mov ebp, sarea
    ret
feedregs:
    call crc_dword
    push eax
    mov eax, ecx
    call crc_dword
    mov eax, edx
    call crc_dword
    mov eax, ebx
    call crc_dword
    mov eax, esi
    call crc_dword
    mov eax, edi
    call crc_dword
    pop eax
    ret
sarea: times 256 + 16 db 0
