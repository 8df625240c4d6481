; @desc: Sound Blaster 8-bit single-cycle DMA playback (DSP 14h) of a 4000-byte square wave at 11 kHz, waits for the block-end IRQ 7 (with a tick timeout), acknowledges it by reading 22Eh
; @tags: irq.sb_dma
; @timing: dependent
; @budget: 1900000
org 100h
%include "lib.inc"
start:
    call sb_reset
    jc .nosb
    call buf_seg
    mov es, ax
    xor di, di
    mov cx, 4000
.g: mov ax, di
    and al, 16
    shl al, 3
    add al, 40h
    stosb
    loop .g
    call sb_hook
    mov al, 0D1h                ; speaker on
    call sb_write
    mov al, 40h                 ; time constant
    call sb_write
    mov al, 165                 ; 256 - 1000000/11000
    call sb_write
    mov cx, 4000 - 1
    mov al, 49h                 ; single, read (memory -> device), channel 1
    call dma_setup
    mov al, 14h
    call sb_write
    mov al, (4000 - 1) & 0FFh
    call sb_write
    mov al, (4000 - 1) >> 8
    call sb_write
    mov ax, 40h
    mov fs, ax
    mov bx, [fs:6Ch]
.w: cmp word [cs:sbirqs], 1
    jae .done
    mov ax, [fs:6Ch]
    sub ax, bx
    cmp ax, 36
    jb .w
.done:
    mov al, 0D3h                ; speaker off
    call sb_write
    call sb_unhook
    cmp word [cs:sbirqs], 1
    jne .to
    PRINT 'SB BLOCK IRQ 1'
    EXIT 0
.to: PRINT 'SB TIMEOUT'
    EXIT 0
.nosb:
    PRINT 'SB NOT FOUND'
    EXIT 0
%include "sb.inc"
