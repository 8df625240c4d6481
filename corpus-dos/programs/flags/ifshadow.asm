; @desc: CLI/STI/PUSHF/POPF/IRET interleavings that keep IF consistent: nested PUSHF/CLI ... POPF critical sections, STI;HLT-free, IRET restoring IF=0 then 1, POPF with IF clear inside a far call
; @tags: flags.pushf_popf_cli_sti_iret
; @budget: 19000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov cx, 200
.l:
    pushf
    cli
    pushf
    pop ax
    and ax, 0200h
    add [cnt], ax
    test cl, 1
    jz .skip
    sti
.skip:
    pushf
    pop ax
    and ax, 0200h
    add [cnt + 2], ax
    popf                    ; restores IF=1
    ; IRET to IF=0 frame, then STI
    push word 0002h
    push cs
    push word .r
    iret
.r: pushf
    pop ax
    and ax, 0200h
    add [cnt + 4], ax
    sti
    push cs
    call .far
    loop .l
    mov si, cnt
    mov cx, 8
    call crc_buf
    jmp print_crc_exit
.far:
    pushf
    cli
    inc word [cnt + 6]
    popf
    retf
cnt: dw 0, 0, 0, 0
