; @desc: far jump tables in a COM program: JMP FAR [table+bx], CALL FAR [cs:table+si], JMP FAR [es:di] from a copied table, CALL FAR [bp+n] through a pointer on the stack, JMP FAR [ebx*4+table] (32-bit addressing), O32 JMP FAR m16:32, PUSH seg/PUSH off/RETF; entries reach the same handlers through alias selectors (CS-1:off+16, CS+1:off-16) and handlers fold CS-base into the result; 600 LCG-chosen dispatches
; @tags: cf.jump_table cf.jump_table32 cf.far_jump_table cf.far_call arith.real32_sib
; @budget: 37000
org 100h
%include "lib.inc"
NH equ 6
start:
    call crc_init
    cld                         ; DF is not defined at entry
    mov [base], cs
    ; far pointer table: handler i through selector CS + (i%3 - 1), offset adjusted
    xor bx, bx
    xor si, si
    xor di, di
.t: mov ax, [hoff + si]
    mov cx, si
    shr cx, 1
    mov dx, cx
    imul dx, dx, 0AABh          ; dx >> 13 = i / 3 for small i
    shr dx, 13
    imul dx, dx, 3
    sub cx, dx                  ; i % 3
    dec cx                      ; -1, 0, +1
    mov dx, cs
    add dx, cx
    shl cx, 4
    sub ax, cx
    mov [ftab + bx], ax
    mov [ftab + bx + 2], dx
    mov [ftab32 + di], ax       ; 6-byte m16:32 entries: offset dword, selector
    mov word [ftab32 + di + 2], 0
    mov [ftab32 + di + 4], dx
    add di, 6
    add bx, 4
    add si, 2
    cmp si, NH * 2
    jb .t
    ; a copy of the table in another segment for the ES: form
    mov ax, cs
    add ax, 1000h
    mov es, ax
    mov si, ftab
    xor di, di
    mov cx, NH * 2
    rep movsw
    mov word [retp], cont
    mov [retp + 2], cs
    xor edx, edx
    mov ebx, 1
    mov word [rnd], 7
    mov word [n], 600
disp:
    mov ax, [rnd]               ; rnd = rnd * 75 + 74 mod 65537-ish (16-bit LCG)
    imul ax, ax, 75
    add ax, 74
    mov [rnd], ax
    xor dx, ax
    movzx eax, ah
    mov cl, 7                   ; form = (rnd >> 8) % 7, handler = rnd % 6
    div cl
    movzx di, ah                ; form
    mov [form], di
    mov ax, [rnd]
    xor ah, ah
    mov cl, NH
    div cl
    movzx bx, ah                ; handler index
    add di, di
    jmp [forms + di]
f0: shl bx, 2
    jmp far [ftab + bx]
f1: mov si, bx
    shl si, 2
    call far [cs:ftab + si]
    jmp cont
f2: mov di, bx
    shl di, 2
    jmp far [es:di]
f3: shl bx, 2
    push word [ftab + bx + 2]
    push word [ftab + bx]
    mov bp, sp
    call far [bp]               ; SS:BP
    add sp, 4
    jmp cont
f4: movzx ebx, bx
    jmp far [ebx*4 + ftab]
f5: imul bx, bx, 6
    o32 jmp far [ftab32 + bx]   ; m16:32 (upper offset word 0)
f6: shl bx, 2
    push word [ftab + bx + 2]
    push word [ftab + bx]
    retf
cont:
    dec word [n]
    jnz disp
    mov eax, edx
    call crc_dword
    mov eax, ebx
    call crc_dword
    mov ax, [hits]
    call crc_word
    mov ax, [hits + 2]
    call crc_word
    jmp print_crc_exit

; handlers: entered by JMP FAR or CALL FAR; [form] tells how to return.  They
; touch memory only through DS (CS may be an alias).
%macro HEND 0
    inc word [hits]
    cmp byte [form], 1          ; forms 1 and 3 came by CALL FAR
    je %%r
    cmp byte [form], 3
    je %%r
    jmp far [retp]
%%r: inc word [hits + 2]
    retf
%endmacro
h0: mov ax, cs
    sub ax, [base]
    add dx, ax
    add edx, ebx
    HEND
h1: imul edx, edx, 7
    mov ax, cs
    sub ax, [base]
    xor dl, al
    HEND
h2: rol edx, 9
    add ebx, edx
    HEND
h3: mov ax, cs
    sub ax, [base]
    shl eax, 24
    xor edx, eax
    inc ebx
    HEND
h4: sub edx, ebx
    ror ebx, 3
    HEND
h5: mov ax, cs
    sub ax, [base]
    add ax, 2
    imul ebx, eax
    add ebx, 11
    HEND

forms: dw f0, f1, f2, f3, f4, f5, f6
hoff: dw h0, h1, h2, h3, h4, h5
base: dw 0
rnd: dw 0
n: dw 0
form: dw 0
hits: dw 0, 0
retp: dw 0, 0
align 4
ftab: times NH dd 0
ftab32: times NH * 6 db 0
