; @desc: INT 09h keyboard ISR: reads port 60h, records make/break codes, acknowledges with EOI itself; waits up to ~3 s for the scripted key (A: 1Eh make, 9Eh break)
; @tags: irq.keyboard
; @dosbox-bug: not a DOSBox bug: the headless DOSBox run has no scripted key input, so it takes the no-key path (the @keys script is for toyvm)
; @timing: dependent
; @keys: 1E@2000000,9E@2400000
; @expect: KEYS 1E 9E
; @budget: 3100000
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
.w: cmp word [n], 2
    jae .done
    mov ax, [fs:6Ch]
    sub ax, bx
    cmp ax, 54
    jb .w
.done:
    cli
    mov eax, [old9]
    mov [es:9*4], eax
    sti
    cmp word [n], 0
    jne .some
    PRINT 'KEYS NONE'
    EXIT 0
.some:
    PRINTN 'KEYS'
    xor si, si
.p: cmp si, [n]
    jae .e
    PRINTN ' '
    mov al, [codes + si]
    call hex2
    inc si
    jmp .p
.e: PRINT ''
    EXIT 0
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
    push bx
    in al, 60h
    mov bx, [cs:n]
    cmp bx, 8
    jae .f
    mov [cs:codes + bx], al
    inc word [cs:n]
.f: in al, 61h                  ; XT-style acknowledge pulse
    or al, 80h
    out 61h, al
    and al, 7Fh
    out 61h, al
    mov al, 20h
    out 20h, al
    pop bx
    pop ax
    iret
old9: dd 0
n: dw 0
codes: times 8 db 0
