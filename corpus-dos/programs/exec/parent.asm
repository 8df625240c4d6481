; @desc: EXEC (4Bh 00h) of CHILD.COM with a command tail after shrinking its own memory (4Ah), then reads the child's return code with 4Dh; CRC of the code and the EXEC status
; @tags: dos.exec mem.dos_alloc
; @budget: 34000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov sp, stack_top
    mov ah, 4Ah
    mov bx, 1000h                ; keep the whole 64 KiB COM segment
    push cs
    pop es
    int 21h
    setc al
    call crc_byte
    mov [pb_cmd + 2], cs
    mov [pb_fcb1 + 2], cs
    mov [pb_fcb2 + 2], cs
    mov ax, 4B00h
    mov dx, childname
    mov bx, pblock
    int 21h
    push cs
    pop ds
    push cs
    pop es
    cli
    push cs
    pop ss
    mov sp, stack_top
    sti
    setc al
    call crc_byte
    mov ah, 4Dh
    int 21h
    call crc_word               ; AL = 42, AH = 0 (normal termination)
    jmp print_crc_exit
childname: db 'CHILD.COM', 0
tail: db 12, ' hello child', 13
fcb: times 16 db 0
pblock: dw 0
pb_cmd: dw tail, 0
pb_fcb1: dw fcb, 0
pb_fcb2: dw fcb, 0
    times 512 db 0
stack_top:
