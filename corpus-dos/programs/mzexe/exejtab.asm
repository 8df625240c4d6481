; @desc: MZ EXE bytecode interpreter whose opcode handlers live in three code segments: dispatch by JMP FAR [table+bx] through a loader-relocated far pointer table, handlers return by relocated JMP FAR ptr16:16, by RETF after CALL FAR [mem], or by JMP FAR [mem]; 8 opcodes, a counted loop of 300 iterations in bytecode
; @tags: dos.exe_reloc cf.jump_table cf.far_jump_table cf.far_call
; @format: exe
; @budget: 69000
%include "mz.inc"
MZ_BEGIN 8                      ; 128-byte header: up to 25 relocations

MZ_SEG code1, 0
%include "lib.inc"
start:
    call crc_init
    cld                         ; DF is not defined at entry
    mov ax, SEG_data
    RELOC
    mov ds, ax
    mov es, ax
    xor eax, eax                ; VM registers: r0 = eax, r1 = edx, r2 = ebp (as data), counter in cx
    xor edx, edx
    xor ebp, ebp
    mov cx, 300
    mov si, bytecode
next:                           ; fetch-dispatch: JMP FAR through the table
    movzx bx, byte [si]
    inc si
    shl bx, 2
    cmp bx, 4 * 4
    jae .call
    jmp far [jtab + bx]
.call:                          ; opcodes 4..7: CALL FAR [mem], handler RETFs
    call far [jtab + bx]
    jmp next
done:
    call crc_dword
    mov eax, edx
    call crc_dword
    mov eax, ebp
    call crc_dword
    mov ax, si
    call crc_word
    jmp print_crc_exit

MZ_SEG code2, 0A0h
op_addi:                        ; 0: r0 += imm16 (sign-extended)
    movsx ebx, word [si]
    add si, 2
    add eax, ebx
    jmp SEG_code1:next
    RELOC
op_mix:                         ; 1: r1 = r1 * 33 ^ r0
    imul edx, edx, 33
    xor edx, eax
    jmp SEG_code1:next
    RELOC
op_loop:                        ; 2: if --cx: si = target
    mov bx, [si]
    add si, 2
    dec cx
    jz .out
    mov si, bx
.out:
    jmp far [retnext]
op_f5:                          ; 5: r0 = rol(r0, 5) (RETF)
    rol eax, 5
    retf

MZ_SEG code3, 0B0h
op_halt:                        ; 3: stop
    jmp SEG_code1:done
    RELOC
op_swap:                        ; 4: swap r0, r1 (RETF)
    xchg eax, edx
    retf
op_acc:                         ; 6: r2 += r0 ^ r1, r2 = ror(r2, 3) (RETF)
    mov ebx, eax
    xor ebx, edx
    add ebp, ebx
    ror ebp, 3
    retf
op_sub:                         ; 7: r0 -= r1 >> 7 (RETF)
    mov ebx, edx
    shr ebx, 7
    sub eax, ebx
    retf

MZ_SEG data, 0C0h
jtab:
    dw op_addi, SEG_code2
    RELOC
    dw op_mix, SEG_code2
    RELOC
    dw op_loop, SEG_code2
    RELOC
    dw op_halt, SEG_code3
    RELOC
    dw op_swap, SEG_code3
    RELOC
    dw op_f5, SEG_code2
    RELOC
    dw op_acc, SEG_code3
    RELOC
    dw op_sub, SEG_code3
    RELOC
retnext:
    dw next, SEG_code1
    RELOC
bytecode:
    db 0
    dw 1234
.top:
    db 0
    dw -77
    db 1, 5, 6, 4, 7, 1, 4, 6
    db 0
    dw 3
    db 5, 1, 7, 6
    db 2
    dw .top
    db 3

MZ_SEG stk, 0C8h
    times 100h db 0
MZ_END code1, start, stk, 100h, 0, 0FFFFh
