; @desc: REP STOSB overwrites the instructions that follow it (INC BX x 32 become NOPs in part), then the code falls into them; re-armed 50 times with different lengths
; @tags: smc.same_block mem.rep_string
; @budget: 19000
org 100h
%include "lib.inc"
start:
    call crc_init
    push cs
    pop es
    mov bp, 50
    xor bx, bx
.round:
    ; re-arm: 32 x INC BX (43h)
    mov di, .sled
    mov cx, 32
    mov al, 43h
    cld
    rep stosb
    mov cx, bp
    and cx, 31
    mov di, .sled
    mov al, 90h
    rep stosb               ; the .sled starts right after this instruction
.sled:
    times 32 db 43h
    mov ax, bx
    call crc_word
    dec bp
    jnz .round
    jmp print_crc_exit
