; @desc: INT 09h hook that peeks port 60h and chains to the BIOS handler; the key then arrives through INT 16h AH=01h/00h polling (BIOS buffer); waits up to ~3 s
; @tags: irq.keyboard int.hook_chain
; @dosbox-bug: not a DOSBox bug: the headless DOSBox run has no scripted key input, so it takes the no-key path (the @keys script is for toyvm)
; @timing: dependent
; @keys: 1E@2000000,9E@2400000
; @expect: PEEK 1E BIOS 1E61
; @budget: 2600000
org 100h
%include "lib.inc"
start:
    xor ax, ax
    mov es, ax
    cli
    mov eax, [es:9*4]
    mov [old9], eax
    mov word [es:9*4], isr
    mov [es:9*4 + 2], cs
    sti
    mov ax, 40h
    mov fs, ax
    mov bx, [fs:6Ch]
.w: mov ah, 1
    int 16h
    jnz .key
    mov ax, [fs:6Ch]
    sub ax, bx
    cmp ax, 54
    jb .w
    call unhook
    PRINT 'NO KEY'
    EXIT 0
.key:
    mov ah, 0
    int 16h
    mov [bios], ax
    call unhook
    PRINTN 'PEEK '
    mov al, [peek]
    call hex2
    PRINTN ' BIOS '
    mov al, [bios + 1]
    call hex2
    mov al, [bios]
    call hex2
    PRINT ''
    EXIT 0
unhook:
    cli
    mov eax, [old9]
    mov [es:9*4], eax
    sti
    ret
hex2: push ax
    shr al, 4
    call nib
    pop ax
nib: and al, 0Fh
    add al, '0'
    cmp al, '9'
    jbe .o
    add al, 7
.o: mov dl, al
    mov ah, 2
    int 21h
    ret
isr:
    push ax
    in al, 60h
    cmp byte [cs:peek], 0
    jne .c
    mov [cs:peek], al
.c: pop ax
    jmp far [cs:old9]
old9: dd 0
peek: db 0
bios: dw 0
