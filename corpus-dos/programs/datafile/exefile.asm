; @desc: MZ EXE (48-byte header) reading CORPDATA.BIN: file name in a relocated data segment, one 3000-byte INT 21h/3Fh read into a BSS segment beyond the image (DS:DX far buffer), LSEEK from the end (4202h) for the size, re-read at EOF (0 bytes), a short read across EOF, open of a missing file (CF, AX=2); CRC of the data, counts and error codes
; @tags: dos.exe_reloc dos.datafile
; @format: exe
; @budget: 35000
%include "mz.inc"
MZ_BEGIN 3                      ; 48-byte header: up to 5 relocations

MZ_SEG code1, 0
%include "lib.inc"
start:
    call crc_init
    cld                         ; DF is not defined at entry
    mov ax, SEG_data
    RELOC
    mov ds, ax
    mov [psp], es
    mov ax, SEG_buf
    RELOC
    mov [bufseg], ax
    sub ax, [psp]
    call crc_word               ; 10h + SEG_buf
    mov ax, 3D00h
    mov dx, fname
    int 21h
    jc .err
    mov [handle], ax
    mov bx, ax
    mov ax, 4202h               ; size: seek 0 from the end
    xor cx, cx
    xor dx, dx
    int 21h
    call crc_word
    mov ax, dx
    call crc_word
    mov ax, 4200h
    xor cx, cx
    xor dx, dx
    int 21h
    push ds
    mov ds, [bufseg]            ; read everything at once into the far buffer
    mov ah, 3Fh
    mov cx, 4000
    xor dx, dx
    int 21h
    pop ds
    jc .err
    call crc_word               ; 3000
    mov ah, 3Fh                 ; at EOF: 0 bytes, no error
    mov cx, 16
    mov dx, small
    int 21h
    setc dl
    call crc_word
    mov al, dl
    call crc_byte
    mov ax, 4200h               ; a read that crosses EOF: 10 of 100 bytes
    xor cx, cx
    mov dx, 2990
    int 21h
    mov ah, 3Fh
    mov cx, 100
    mov dx, small
    int 21h
    call crc_word
    mov si, small
    mov cx, 10
    call crc_buf
    mov ah, 3Eh
    int 21h
    setc al
    call crc_byte
    mov ax, 3D00h               ; a missing file: CF=1, AX=2
    mov dx, missing
    int 21h
    setc dl
    call crc_word
    mov al, dl
    call crc_byte
    push ds
    mov ds, [bufseg]
    xor si, si
    mov cx, 3000
    call crc_buf
    pop ds
    jmp print_crc_exit
.err:
    PRINT 'FILE ERROR'
    EXIT 1

MZ_SEG data, 0B0h
psp: dw 0
bufseg: dw 0
handle: dw 0
fname: db 'CORPDATA.BIN', 0
missing: db 'NOSUCH.BIN', 0
small: times 100 db 0
MZ_SEG stk, 0BAh
    times 100h db 0
MZ_BSS buf, 0CAh                ; 4 KiB buffer beyond the image
MZ_END code1, start, stk, 100h, 100h, 0FFFFh
