; @desc: loads and stores through every segment override (ES CS SS DS FS GS) with four distinct segments, incl. overriding the SS default of [bp]
; @tags: mem.seg_override mem.fs_gs
; @budget: 25000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov es, ax
    add ax, 1000h
    mov fs, ax
    add ax, 1000h
    mov gs, ax
    xor bx, bx
.init:                      ; es:[i]=i, fs:[i]=i*3, gs:[i]=~i
    mov ax, bx
    mov [es:bx], al
    mov ah, 3
    mul ah
    mov [fs:bx], al
    mov al, bl
    not al
    mov [gs:bx], al
    inc bx
    cmp bx, 260                 ; the CRC below reads 260 bytes of each segment
    jb .init
    mov cx, 256
    xor bx, bx
    xor dx, dx
.l:
    mov al, [es:bx]
    add dl, al
    add dl, [fs:bx]
    xor dl, [gs:bx]
    adc dh, [cs:tbl + bx]
    mov bp, bx
    add dh, [ds:bp + tbl]         ; DS override of the SS default
    sub dh, [bp + tbl]            ; SS default (SS = DS in a COM: same byte)
    mov [fs:bx + 1], dl
    mov [gs:bx + 2], dh
    mov [es:bp + 3], dx           ; ES override on a BP address
    inc bx
    loop .l
    mov ax, dx
    call crc_word
    push ds
    push es
    pop ds
    xor si, si
    mov cx, 260
    call crc_buf
    push fs
    pop ds
    xor si, si
    mov cx, 260
    call crc_buf
    push gs
    pop ds
    xor si, si
    mov cx, 260
    call crc_buf
    pop ds
    jmp print_crc_exit
tbl:
%assign i 0
%rep 256
    db (i * 37 + 11) & 0FFh
%assign i i+1
%endrep
