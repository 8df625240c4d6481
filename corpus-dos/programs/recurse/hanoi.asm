; @desc: Towers of Hanoi with 13 discs (8191 moves) by recursion with BP frames; each move is CRC'd
; @tags: cf.recursion cf.deep_calls
; @budget: 610000
org 100h
%include "lib.inc"
start:
    call crc_init
    push word 13
    push word 1
    push word 3
    push word 2
    call hanoi
    mov ax, [moves]
    call crc_word
    jmp print_crc_exit
hanoi:              ; (n, from, to, via) pushed in that order
    push bp
    mov bp, sp
    mov ax, [bp + 10]
    test ax, ax
    jz .done
    dec ax
    push ax
    push word [bp + 8]
    push word [bp + 4]
    push word [bp + 6]
    call hanoi
    mov al, [bp + 8]
    mov ah, [bp + 6]
    call crc_word
    inc word [moves]
    mov ax, [bp + 10]
    dec ax
    push ax
    push word [bp + 4]
    push word [bp + 6]
    push word [bp + 8]
    call hanoi
.done:
    pop bp
    ret 8
moves: dw 0
