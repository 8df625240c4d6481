; @desc: INT 21h hook that calls the old handler with PUSHF/CALL FAR and post-processes: AH=09h strings are upper-cased before the call and restored after; CF of the DOS return passed back through the flags image
; @tags: int.hook_chain flags.pushf_popf_cli_sti_iret
; @budget: 13000
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
    mov dx, msg
    mov ah, 09h
    int 21h
    mov ah, 3Dh             ; open a file that does not exist: CF=1 through the hook
    mov al, 0
    mov dx, nofile
    int 21h
    pushf
    pop ax
    and ax, 1
    call crc_word
    push ds
    lds dx, [old21]
    mov ax, 2521h
    int 21h
    pop ds
    mov si, msg
    mov cx, msglen
    call crc_buf            ; restored to lower case
    mov ax, [calls]
    call crc_word
    jmp print_crc_exit
hook:
    inc word [cs:calls]
    cmp ah, 09h
    jne .chain
    push si
    mov si, dx
.up: mov al, [si]
    cmp al, '$'
    je .go
    cmp al, 'a'
    jb .n
    cmp al, 'z'
    ja .n
    sub byte [si], 20h
.n: inc si
    jmp .up
.go:
    pop si
    mov ah, 09h
    pushf
    call far [cs:old21]
    push si                 ; lower it again
    mov si, dx
.lo: mov al, [si]
    cmp al, '$'
    je .done
    cmp al, 'A'
    jb .m
    cmp al, 'Z'
    ja .m
    add byte [si], 20h
.m: inc si
    jmp .lo
.done:
    pop si
    iret
.chain:
    pushf
    call far [cs:old21]
    push bp                 ; copy CF of the result into the caller's flags image
    mov bp, sp
    jc .cf
    and word [bp + 6], ~1
    pop bp
    iret
.cf: or word [bp + 6], 1
    pop bp
    iret
old21: dd 0
calls: dw 0
msg: db 'printed through the hook', 13, 10, '$'
msglen equ $ - msg
nofile: db 'NOSUCH.XYZ', 0
