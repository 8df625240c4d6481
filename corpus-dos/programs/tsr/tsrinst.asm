; @desc: TSR: hooks INT 2Fh (multiplex id 0C7h: install check and a keyed hash service) and stays resident with INT 21h 31h keeping only its resident part
; @tags: dos.tsr int.hook_chain
; @solo
; @budget: 1000
org 100h
%include "lib.inc"
start:
    mov ax, 352Fh
    int 21h
    mov [old2f], bx
    mov [old2f + 2], es
    mov ax, 252Fh
    mov dx, res2f
    int 21h
    PRINT 'TSR INSTALLED'
    mov ax, 3100h
    mov dx, (resident_end - $$ + 100h + 15) / 16
    int 21h
res2f:
    cmp ah, 0C7h
    jne .chain
    cmp al, 0
    jne .svc
    mov al, 0FFh
    mov bx, 'CD'
    iret
.svc:
    inc word [cs:calls]
    imul bx, bx, 31
    add bx, [cs:calls]
    iret
.chain:
    jmp far [cs:old2f]
old2f: dd 0
calls: dw 0
resident_end:
