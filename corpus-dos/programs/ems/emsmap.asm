; @desc: EMS: detects EMMXXXX0 through the INT 67h vector, gets the page frame (41h), allocates 8 pages (43h), maps each logical page to physical page 0..3 (44h) writing a pattern, re-maps and reads back, frees (45h); CRC of the data and statuses
; @tags: mem.ems
; @budget: 110000
org 100h
%include "lib.inc"
start:
    call crc_init
    xor ax, ax
    mov es, ax
    mov es, [es:67h*4 + 2]
    mov di, 0Ah
    mov si, emmname
    mov cx, 8
    repe cmpsb
    jne .noems
    mov ah, 41h
    int 67h
    mov al, ah
    call crc_byte
    mov [frame], bx
    mov ah, 43h
    mov bx, 8
    int 67h
    mov al, ah
    call crc_byte
    mov [handle], dx
    xor bx, bx                  ; logical page
.w: mov ax, 4400h               ; map logical bx to physical 0
    mov dx, [handle]
    int 67h
    mov al, ah
    call crc_byte
    mov es, [frame]
    xor di, di
    mov cx, 8192
    mov ax, bx
    imul ax, ax, 0101h
    xor ax, 5AA5h
    cld
    rep stosw
    inc bx
    cmp bx, 8
    jb .w
    ; read back: logical pages 7..0 mapped to physical pages 0..3 in turn
    mov bx, 7
.r: mov ax, bx
    and al, 3
    mov ah, 44h
    mov dx, [handle]
    int 67h
    mov al, ah
    call crc_byte
    mov ax, bx
    and ax, 3
    shl ax, 10                  ; 16 KiB = 400h paragraphs
    add ax, [frame]
    push ds
    mov ds, ax
    mov si, 100
    mov cx, 256
    call crc_buf
    pop ds
    dec bx
    jns .r
    mov ah, 45h
    mov dx, [handle]
    int 67h
    mov al, ah
    call crc_byte
    jmp print_crc_exit
.noems:
    PRINT 'NO EMS'
    EXIT 1
emmname: db 'EMMXXXX0'
frame: dw 0
handle: dw 0
