; @desc: IRET to hand-built frames (IP, CS, FLAGS) with 64 flag images (CF PF AF ZF SF DF OF and IF), PUSHF readback after each; also RETF 2 / IRET round trips
; @tags: flags.pushf_popf_cli_sti_iret
; @budget: 21000
org 100h
%include "lib.inc"
start:
    call crc_init
    xor bx, bx
.l:
    mov ax, bx              ; spread 6 bits over CF PF AF ZF SF OF, bit 6 -> DF
    xor dx, dx
    test al, 1
    jz .a
    or dx, 001h
.a: test al, 2
    jz .b
    or dx, 004h
.b: test al, 4
    jz .c
    or dx, 010h
.c: test al, 8
    jz .d
    or dx, 040h
.d: test al, 16
    jz .e
    or dx, 080h
.e: test al, 32
    jz .f
    or dx, 800h
.f: test al, 64
    jz .g
    or dx, 400h
.g: or dx, 0200h            ; IF stays set
    push dx
    push cs
    push word .back
    iret
.back:
    pushf
    cld
    pop ax
    and ax, 0FD5h
    call crc_word
    inc bx
    cmp bx, 128
    jb .l
    ; CLI / STI / PUSHF sequences
    cli
    pushf
    sti
    pushf
    pop ax
    and ax, 0200h
    call crc_word
    pop ax
    and ax, 0200h
    call crc_word
    ; POPF restores IF=0 then STI
    push word 0002h
    popf
    pushf
    pop ax
    sti
    and ax, 0FD5h
    call crc_word
    jmp print_crc_exit
