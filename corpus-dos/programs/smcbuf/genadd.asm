; @desc: code generated into a data segment (a chain of ADD/XOR/ROL with immediates ending in RETF) and far-called; regenerated with new immediates 40 times in the same buffer
; @tags: smc.buffer_exec cf.far_call cf.far_selector_patch
; @budget: 59000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    mov [target + 2], ax
    mov bp, 40
    mov dx, 1
.round:
    xor di, di
    mov cx, 50
    cld
.gen:
    mov al, 05h             ; add ax, imm16
    stosb
    mov ax, dx
    stosw
    mov ax, 0F031h          ; xor ax, si  (31 F0)
    xchg al, ah
    mov ax, 0F031h
    stosw
    mov ax, 0C0D1h          ; rol ax, 1   (D1 C0)
    mov al, 0D1h
    mov ah, 0C0h
    stosw
    imul dx, dx, 13
    add dx, 7
    loop .gen
    mov al, 0CBh            ; retf
    stosb
    mov ax, bp
    mov si, 5A5Ah
    call far [target]
    call crc_word
    dec bp
    jnz .round
    jmp print_crc_exit
target: dw 0, 0
