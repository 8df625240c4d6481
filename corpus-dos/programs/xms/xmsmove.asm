; @desc: XMS: INT 2Fh 4300h detect, 4310h driver entry, allocate a 64 KiB EMB (09h), move 32 KiB conventional -> EMB -> conventional (0Bh) at offsets, free (0Ah); CRC of the data moved back and the status codes
; @tags: mem.xms
; @budget: 340000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov ax, 4300h
    int 2Fh
    cmp al, 80h
    jne .noxms
    mov ax, 4310h
    int 2Fh
    mov [xms], bx
    mov [xms + 2], es
    mov ah, 09h
    mov dx, 64
    call far [xms]
    call crc_word               ; AX = 1
    mov [handle], dx
    ; source data in segment +1000h
    mov ax, cs
    add ax, 1000h
    mov es, ax
    xor di, di
    mov cx, 32768
    mov bx, 5
.f: imul bx, bx, 25173
    add bx, 13849
    mov al, bh
    stosb
    loop .f
    ; conv -> EMB offset 1000h
    mov dword [emm + 0], 32768
    mov word [emm + 4], 0
    mov word [emm + 6], 0
    mov [emm + 8], es
    mov ax, [handle]
    mov [emm + 10], ax
    mov dword [emm + 12], 1000h
    mov ah, 0Bh
    mov si, emm
    call far [xms]
    call crc_word
    ; EMB offset 1000h+100h -> conv segment +2000h
    mov ax, [handle]
    mov [emm + 4], ax
    mov dword [emm + 6], 1100h
    mov word [emm + 10], 0
    mov word [emm + 12], 0
    mov ax, cs
    add ax, 2000h
    mov [emm + 14], ax
    mov dword [emm], 16384
    mov ah, 0Bh
    mov si, emm
    call far [xms]
    call crc_word
    mov ah, 0Ah
    mov dx, [handle]
    call far [xms]
    call crc_word
    push ds
    mov ax, cs
    add ax, 2000h
    mov ds, ax
    xor si, si
    mov cx, 16384
    call crc_buf
    pop ds
    jmp print_crc_exit
.noxms:
    PRINT 'NO XMS'
    EXIT 1
xms: dd 0
handle: dw 0
emm: times 16 db 0
