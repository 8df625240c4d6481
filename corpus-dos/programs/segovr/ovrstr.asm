; @desc: string instructions with segment overrides: FS:/GS:/CS:/ES: on the MOVS/LODS/CMPS source; the prefix must NOT move the ES:DI destination (STOS, SCAS, MOVS dest)
; @tags: mem.seg_override mem.fs_gs mem.rep_string
; @budget: 16000
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
    cld
    xor di, di
    mov cx, 128
    mov ax, 1111h
    rep stosw
    push es
    push fs
    pop es
    xor di, di
    mov cx, 128
    mov ax, 2222h
    rep stosw
    push gs
    pop es
    xor di, di
    mov cx, 128
    mov ax, 3333h
    rep stosw
    pop es
    ; FS: source for REP MOVSB into ES
    mov si, 10
    mov di, 40
    mov cx, 20
    fs rep movsb
    ; GS: LODSW
    mov si, 4
    gs lodsw
    call crc_word
    ; CS: MOVSW from our code segment table
    mov si, tbl
    mov di, 80
    mov cx, 8
    rep cs movsw             ; prefix order REP CS
    ; an override on STOSB is ignored: still ES:DI
    mov di, 100
    mov al, 44h
    fs stosb
    ; SCASB with GS: prefix: compares ES:DI
    mov di, 100
    mov al, 44h
    gs scasb
    pushf
    pop ax
    and ax, 08D5h
    call crc_word
    ; CMPSB FS:[SI] vs ES:[DI]
    mov si, 0
    mov di, 40
    mov cx, 30
    fs repe cmpsb
    mov ax, cx
    call crc_word
    mov ax, si
    call crc_word
    push ds
    push es
    pop ds
    xor si, si
    mov cx, 256
    call crc_buf
    push fs
    pop ds
    xor si, si
    mov cx, 256
    call crc_buf
    pop ds
    jmp print_crc_exit
tbl: dw 1, 2, 3, 4, 5, 6, 7, 8
