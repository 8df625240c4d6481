; @desc: polls the keyboard controller status port 64h (bit 0 output-buffer-full) and port 60h for up to ~2 s of timer ticks, with interrupts off for the keyboard IRQ; prints the first scan code seen or NONE
; @tags: wait.kbd_status
; @dosbox-bug: not a DOSBox bug: the headless DOSBox run has no scripted key input, so it takes the no-key path (the @keys script is for toyvm)
; @timing: dependent
; @keys: 1E@2000000,9E@2400000
; @expect: KEY 1E
; @budget: 2600000
org 100h
%include "lib.inc"
start:
    in al, 21h
    mov [mask], al
    or al, 02h                  ; mask IRQ1 so the BIOS does not eat the byte
    out 21h, al
    mov ax, 40h
    mov es, ax
    mov bx, [es:6Ch]
.l: in al, 64h
    test al, 1
    jnz .got
    mov ax, [es:6Ch]
    sub ax, bx
    cmp ax, 36
    jb .l
    mov al, [mask]
    out 21h, al
    PRINT 'KEY NONE'
    EXIT 0
.got:
    in al, 60h
    movzx eax, al
    push ax
    mov al, [mask]
    out 21h, al
    PRINTN 'KEY '
    pop ax
    mov [hx], al
    shr al, 4
    call nib
    mov al, [hx]
    call nib
    PRINT ''
    EXIT 0
nib: and al, 0Fh
    add al, '0'
    cmp al, '9'
    jbe .o
    add al, 7
.o: mov dl, al
    mov ah, 2
    int 21h
    ret
mask: db 0
hx: db 0
