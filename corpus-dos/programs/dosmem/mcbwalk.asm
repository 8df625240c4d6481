; @desc: DOS memory: shrink the COM block (4Ah), allocate three blocks (48h), free the middle one (49h), grow/shrink (4Ah); walk the MCB chain from the first MCB (INT 21h 52h) to its 'Z' end and find our four blocks (owners and sizes); only these facts are CRC'd, not the environment or other blocks a correct DOS sizes as it likes
; @tags: mem.dos_alloc mem.mcb_walk
; @budget: 12000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov sp, stk
    push cs
    pop es
    mov ah, 4Ah
    mov bx, 1000h                ; keep the whole 64 KiB COM segment
    int 21h
    setc al
    call crc_byte
    mov si, sizes
    mov di, segs
    mov cx, 3
.a: mov ah, 48h
    mov bx, [si]
    int 21h
    setc dl
    mov [di], ax
    mov al, dl
    call crc_byte
    add si, 2
    add di, 2
    loop .a
    mov es, [segs + 2]
    mov ah, 49h
    int 21h
    setc al
    call crc_byte
    mov es, [segs + 4]
    mov ah, 4Ah
    mov bx, 50h
    int 21h
    setc al
    call crc_byte
    ; walk: every MCB must be 'M' or 'Z' and the chain must end; of the blocks, only
    ; the four this program made are judged (the environment block and the
    ; blocks of DOS and the shell have sizes and owners a correct DOS chooses)
    mov ah, 52h
    int 21h
    mov ax, [es:bx - 2]
    xor dx, dx                  ; bit n: block n found with its owner and size
    mov bp, 1000h               ; walk at most 4096 MCBs (a cycle is an error)
.w: mov es, ax
    mov bl, [es:0]
    cmp bl, 'M'
    je .ok
    cmp bl, 'Z'
    jne .bad
.ok: inc ax                     ; AX = the block's segment
    mov si, [es:1]              ; owner
    mov di, [es:3]              ; size
    push cs
    pop cx
    cmp ax, cx
    jne .b1
    cmp si, cx
    jne .b1
    cmp di, 1000h
    jne .b1
    or dl, 1                    ; the program's block, shrunk to 64 KiB
.b1: cmp ax, [segs]
    jne .b2
    cmp si, cx
    jne .b2
    cmp di, 100h
    jne .b2
    or dl, 2                    ; block 1
.b2: cmp ax, [segs + 2]
    jne .b3
    test si, si
    jnz .b3
    or dl, 4                    ; block 2, freed (owner 0)
.b3: cmp ax, [segs + 4]
    jne .b4
    cmp si, cx
    jne .b4
    cmp di, 50h
    jne .b4
    or dl, 8                    ; block 3, shrunk from 80h to 50h
.b4: cmp bl, 'Z'
    je .end
    add ax, di                  ; next MCB = segment + size
    dec bp
    jz .bad
    jmp .w
.end:
    mov al, dl
    call crc_byte               ; 0Fh: all four blocks found as made
    mov es, [segs]
    mov ah, 49h
    int 21h
    mov es, [segs + 4]
    mov ah, 49h
    int 21h
    jmp print_crc_exit
.bad: PRINT 'MCB CHAIN BROKEN'
    EXIT 1
sizes: dw 100h, 200h, 80h
segs: dw 0, 0, 0
    times 256 db 0
stk:
