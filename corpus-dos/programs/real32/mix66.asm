; @desc: 16-bit code with 66h/67h prefixes mixed densely: 32-bit operands with 16-bit addressing and 16-bit operands with 32-bit addressing, PUSHAD/POPAD, 32-bit PUSH imm, MOVSD with 67h
; @tags: arith.real32_sib mem.rep_string
; @budget: 38000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ecx, 1000
    mov eax, 1
    mov edx, 0ABCDEF01h
.l:
    add eax, edx            ; 66h
    rol edx, 5
    xor dx, ax              ; 16-bit
    mov bx, cx
    and bx, 63
    mov [buf + bx], eax     ; 66h, 16-bit addressing
    mov si, [buf + bx + 1]  ; 16-bit
    movzx esi, si
    and esi, 63
    add ax, [esi + buf]     ; 67h with 16-bit operand
    adc edx, [esi*2 + buf]  ; 66h 67h
    pushad
    push dword 12345678h
    pop edi
    xor eax, edi
    mov [buf + 64], eax
    popad
    add eax, [buf + 64]
    dec ecx                  ; 66h dec
    jnz .l
    call crc_dword
    mov eax, edx
    call crc_dword
    ; 67h-prefixed MOVSD: copy buf -> buf2 with ESI/EDI
    mov esi, buf
    mov edi, buf2
    push ds
    pop es
    cld
    mov ecx, 17
    a32 rep movsd
    mov eax, esi
    call crc_dword
    mov eax, edi
    call crc_dword
    mov si, buf
    mov cx, 200
    call crc_buf
    jmp print_crc_exit
align 4
buf: times 136 db 0
buf2: times 80 db 0
