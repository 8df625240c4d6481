; @desc: uses the TSR left by TSRINST in the same session: install check through INT 2Fh AX=C700h, then 100 service calls; CRC of the answers
; @tags: dos.tsr
; @companions: tsrinst
; @budget: 17000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 0C700h
    xor bx, bx
    int 2Fh
    cmp al, 0FFh
    jne .none
    mov ax, bx
    call crc_word
    mov cx, 100
.l: mov ax, 0C701h
    mov bx, cx
    int 2Fh
    mov ax, bx
    call crc_word
    loop .l
    jmp print_crc_exit
.none:
    PRINT 'TSR NOT RESIDENT'
    EXIT 1
