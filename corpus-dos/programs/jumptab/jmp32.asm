; @desc: 32-bit jump tables in real mode: JMP [EAX*2+table] with 67h, JMP EAX (66h near jump, upper EIP zero), JMP DWORD far pointers from a table, 2000 dispatches
; @tags: cf.jump_table cf.jump_table32 arith.real32_sib cf.far_call
; @budget: 33000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov [ftab + 2], cs
    mov [ftab + 6], cs
    mov ecx, 2000
    xor edx, edx
    mov ebx, 1
top:
    mov eax, ecx
    and eax, 3
    jmp [table + eax*2]
t0: add edx, ebx
    jmp cont
t1: movzx eax, word [table + 2*3]
    jmp eax
t2: rol edx, 5
    mov eax, ecx
    and eax, 1
    jmp far [ftab + eax*4]
t3: xor edx, 0DEADBEEFh
    jmp cont
fa: add ebx, 3
    jmp cont
fb: imul ebx, ebx, 7
cont:
    dec ecx
    jnz top
    mov eax, edx
    call crc_dword
    mov eax, ebx
    call crc_dword
    jmp print_crc_exit
table: dw t0, t1, t2, t3
ftab: dw fa, 0, fb, 0
