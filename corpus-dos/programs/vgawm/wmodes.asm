; @desc: every VGA write mode in mode 12h: mode 0 with set/reset + enable set/reset + bit mask + rotate + AND/OR/XOR ALU, mode 1 latch copies, mode 2 colour writes, mode 3 with set/reset and rotate; read mode 0 per plane and read mode 1 colour compare feed the CRC
; @tags: video.vga_write_modes video.planar16
; @budget: 560000
org 100h
%include "lib.inc"
%macro GC 2
    mov dx, 3CEh
    mov ax, ((%2) << 8) | (%1)
    out dx, ax
%endmacro
%macro SEQMASK 1
    mov dx, 3C4h
    mov ax, ((%1) << 8) | 2
    out dx, ax
%endmacro
start:
    call crc_init
    mov ax, 12h
    int 10h
    push word 0A000h
    pop es
    ; mode 0, plain CPU data, all planes, pattern
    SEQMASK 0Fh
    xor di, di
    mov cx, 2000
.m0: mov ax, di
    xor al, 5Ah
    stosb
    loop .m0
    ; mode 0 with set/reset: colour 9 in enabled planes 1 and 3, bit mask 3Ch, XOR
    GC 0, 9
    GC 1, 0Ah
    GC 8, 3Ch
    GC 3, 18h                   ; XOR, rotate 0
    mov di, 100
    mov cx, 400
.sr: mov al, [es:di]            ; load latches
    mov al, 0FFh
    stosb
    loop .sr
    ; mode 0 with rotate 3 and AND
    GC 1, 0
    GC 8, 0FFh
    GC 3, 0Bh                   ; AND, rotate 3
    mov di, 600
    mov cx, 300
.ro: mov al, [es:di]
    mov ax, di
    stosb
    loop .ro
    GC 3, 10h                   ; OR, rotate 0
    mov di, 1000
    mov cx, 200
.or: mov al, [es:di]
    mov al, 81h
    stosb
    loop .or
    GC 3, 0
    ; mode 1: latch copy of 800 bytes to offset 8000
    GC 5, 1
    mov si, 0
    mov di, 8000
    mov cx, 800
.lc: mov al, [es:si]
    mov [es:di], al
    inc si
    inc di
    loop .lc
    ; mode 2: colour per byte, bit mask varies
    GC 5, 2
    mov di, 12000
    mov cx, 512
.m2: mov ax, cx
    mov ah, al
    mov al, 8
    mov dx, 3CEh
    out dx, ax                  ; bit mask = cx low
    mov al, [es:di]
    mov ax, cx
    shr ax, 3
    mov [es:di], al
    inc di
    loop .m2
    GC 8, 0FFh
    ; mode 3: set/reset colour 6, CPU byte rotated 1 ANDed with bit mask
    GC 5, 3
    GC 0, 6
    GC 3, 01h
    mov di, 16000
    mov cx, 400
.m3: mov al, [es:di]
    mov al, cl
    stosb
    loop .m3
    GC 3, 0
    GC 5, 0
    GC 0, 0
    ; read mode 0, each plane
    push ds
    xor bx, bx
.pl: mov dx, 3CEh
    mov al, 4
    mov ah, bl
    out dx, ax
    push word 0A000h
    pop ds
    xor si, si
    mov cx, 17000
    call crc_buf
    inc bx
    cmp bx, 4
    jb .pl
    pop ds
    ; read mode 1: colour compare 6 over the mode-3 area
    GC 2, 6
    GC 7, 0Fh
    GC 5, 8
    mov si, 16000
    mov cx, 400
    push ds
    push word 0A000h
    pop ds
    call crc_buf
    pop ds
    GC 5, 0
    jmp print_crc_exit
