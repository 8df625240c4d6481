; @desc: opens CORPDATA.BIN by a relative name (INT 21h 3Dh), reads it in 1000-byte chunks (3Fh), seeks back (42h) and re-reads, closes (3Eh); CRC of the data and byte counts
; @tags: dos.datafile
; @budget: 35000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 3D00h
    mov dx, fname
    int 21h
    jc .err
    mov bx, ax
.r: mov ah, 3Fh
    mov cx, 1000
    mov dx, buf
    int 21h
    jc .err
    push ax
    call crc_word
    pop cx
    mov si, buf
    call crc_buf
    test cx, cx
    jnz .r
    mov ax, 4200h               ; seek to 1234
    xor cx, cx
    mov dx, 1234
    int 21h
    call crc_word
    mov ah, 3Fh
    mov cx, 16
    mov dx, buf
    int 21h
    mov si, buf
    mov cx, 16
    call crc_buf
    mov ah, 3Eh
    int 21h
    jmp print_crc_exit
.err: PRINT 'FILE ERROR'
    EXIT 1
fname: db 'CORPDATA.BIN', 0
buf: times 1000 db 0
