; @desc: INT n to the program's own handlers that edit the flags image on the stack (CF/ZF return like DOS), INT 3 both encodings (CC and CD 03), INTO with OF=1 and OF=0; all vectors restored
; @tags: flags.pushf_popf_cli_sti_iret int.hook_chain
; @budget: 22000
org 100h
%include "lib.inc"
start:
    call crc_init
    xor ax, ax
    mov es, ax
    ; save and set vectors 3, 4, 60h
    mov eax, [es:3*4]
    mov [old3], eax
    mov eax, [es:4*4]
    mov [old4], eax
    mov eax, [es:60h*4]
    mov [old60], eax
    cli
    mov word [es:3*4], h3
    mov [es:3*4+2], cs
    mov word [es:4*4], h4
    mov [es:4*4+2], cs
    mov word [es:60h*4], h60
    mov [es:60h*4+2], cs
    sti
    mov cx, 100
.l:
    mov ax, cx
    int 60h                 ; returns CF = parity of AX, ZF = (AX mod 3 == 0)
    pushf
    pop dx
    and dx, 0041h
    xchg ax, dx
    call crc_word
    xchg ax, dx
    call crc_word
    loop .l
    int3
    db 0CDh, 03h
    mov al, 7Fh
    add al, 1               ; OF=1
    into
    mov al, 1
    add al, 1               ; OF=0
    into
    mov ax, [hits]
    call crc_word
    cli
    mov eax, [old3]
    mov [es:3*4], eax
    mov eax, [old4]
    mov [es:4*4], eax
    mov eax, [old60]
    mov [es:60h*4], eax
    sti
    jmp print_crc_exit
h60:
    push bp
    mov bp, sp
    and word [bp + 6], ~41h
    test al, 1
    jz .e
    or word [bp + 6], 1
.e: push ax
    push dx
    push bx
    xor dx, dx
    mov bx, 3
    div bx
    test dx, dx
    jnz .nz
    or word [bp + 6], 40h
.nz:
    pop bx
    pop dx
    pop ax
    imul ax, ax, 3
    pop bp
    iret
h3: add word [cs:hits], 1
    iret
h4: add word [cs:hits], 100h
    iret
hits: dw 0
old3: dd 0
old4: dd 0
old60: dd 0
