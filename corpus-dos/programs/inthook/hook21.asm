; @desc: INT 21h hooked with a handler that counts calls per function and chains to DOS with a far JMP; prints through the hook, restores the vector (AH=25h/35h)
; @tags: int.hook_chain
; @budget: 16000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 3521h
    int 21h
    mov [old21], bx
    mov [old21 + 2], es
    mov ax, 2521h
    mov dx, hook
    int 21h
    mov cx, 20
.l:
    mov ax, 3510h           ; get vector 10h (count only: the value is DOS-specific)
    int 21h
    mov ah, 0Bh             ; stdin status
    int 21h
    loop .l
    PRINT 'hooked line'
    push ds
    lds dx, [old21]
    mov ax, 2521h
    int 21h
    pop ds
    mov si, counts
    mov cx, 512
    call crc_buf
    jmp print_crc_exit
hook:
    push bx
    mov bl, ah
    xor bh, bh
    shl bx, 1
    inc word [cs:counts + bx]
    pop bx
    jmp far [cs:old21]
old21: dd 0
counts: times 256 dw 0
