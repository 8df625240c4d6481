; @desc: SS different from DS: [bp+si], [bp+di], [bp+disp] and PUSH/POP use SS, [bx+si] uses DS; a temporary stack in another segment (CLI/STI around the switch)
; @tags: mem.seg_override
; @budget: 69000
org 100h
%include "lib.inc"
start:
    call crc_init
    xor bx, bx                  ; [bx+si+7000h] below: BX is not defined at entry
    mov di, 7000h               ; DS:7000h..718Fh is read back: give it a value first
    mov cx, 400
    mov al, 5Ah
    push ds
    pop es
    cld
    rep stosb
    mov ax, cs
    add ax, 1000h
    mov es, ax
    xor di, di
    mov cx, 8000h
    mov ax, 0EEEEh
    cld
    rep stosw
    mov [oldsp], sp
    mov dx, es
    cli
    mov ss, dx
    mov sp, 8000h
    sti
    mov cx, 100
    mov bp, 7000h
    xor si, si
.l:
    mov [bp + si], cl             ; SS:7000+si (in the other segment)
    mov [bx + si + 7000h], ch     ; DS:...
    push cx
    mov di, si
    add [bp + di + 100h], si
    mov ax, [bp + 2]
    add [bp + di + 4], ax
    pop ax
    add si, 3
    loop .l
    mov ax, cs
    cli
    mov ss, ax
    mov sp, [oldsp]
    sti
    push ds
    push es
    pop ds
    mov si, 7000h
    mov cx, 600h
    call crc_buf
    ; (no CRC of the stack area near 8000h: below SP interrupts write at any time)
    pop ds
    mov si, 7000h
    mov cx, 400
    call crc_buf
    jmp print_crc_exit
oldsp: dw 0
