; @desc: a position-independent routine copied to 8 offsets in another segment (overlapping older copies) and far-called at each; the copies are then patched and re-run
; @tags: smc.buffer_exec cf.far_call
; @budget: 14000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    mov [fp + 2], ax
    xor bx, bx
.copy:
    mov di, [offs + bx]
    mov [fp], di
    mov si, routine
    mov cx, routine_end - routine
    cld
    rep movsb
    mov ax, bx
    mov dx, 1234h
    call far [fp]
    call crc_word
    mov ax, dx
    call crc_word
    add bx, 2
    cmp bx, 16
    jb .copy
    ; patch the multiplier immediate in the last copy (offset of imm = ..@mul_imm - routine)
    mov di, [offs + 14]
    mov word [es:di + ..@mul_imm - routine - 2], 0777h
    mov [fp], di
    mov ax, 99
    mov dx, 1
    call far [fp]
    call crc_word
    mov ax, dx
    call crc_word
    jmp print_crc_exit
offs: dw 0, 100h, 20h, 120h, 7, 30h, 101h, 0FF00h
fp: dw 0, 0
routine:
    mov cx, 20
.r: imul dx, dx, strict word 1F3h
..@mul_imm:
    add dx, ax
    xor ax, dx
    rol ax, 3
    loop .r
    retf
routine_end:
