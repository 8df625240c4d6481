; @desc: 16-bit effective addresses that wrap: [bx+si+disp], [bp+di-disp], [bx+disp16] sums above FFFFh address offset mod 64K (byte and aligned word accesses)
; @tags: mem.wrap64k
; @budget: 68000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, cs
    add ax, 1000h
    mov ds, ax
    mov es, ax
    xor di, di
    mov cx, 8000h
    xor ax, ax
    cld
    rep stosw               ; clear the scratch segment
    mov cx, 200
    mov bx, 0F000h
    mov si, 1000h
    mov dx, 1
.l:
    mov [bx + si + 10h], dl       ; EA = (F000+1000+10) mod 64K = 0010 + ...
    add [bx + si - 2], dx         ; EA = 0FFFEh + ... (aligned word)
    mov bp, 0FFF0h
    mov di, cx
    and di, 0FEh
    mov al, [bp + di + 200h]      ; SS default: SS is our COM segment (EA wraps into our code), not DS
    ds xor [bp + di + 210h], al   ; the same kind of EA in DS
    mov ax, [bx + 1F00h]          ; F000+1F00 = 0F00h after wrap
    add ax, dx
    mov [bx + 1F00h], ax
    add bx, 3
    inc si
    rol dx, 1
    loop .l
    xor si, si
    mov cx, 200h
    call crc_buf
    mov si, 0FE00h
    mov cx, 200h
    call crc_buf
    mov si, 0E00h
    mov cx, 200h
    call crc_buf
    push cs
    pop ds
    jmp print_crc_exit
