; @desc: Sound Blaster auto-initialised 8-bit DMA (DMA mode 59h, DSP 48h block size + 1Ch) with a 2x1024-byte double buffer: the IRQ 7 handler counts 4 half-buffer interrupts, then DAh ends auto-init
; @tags: irq.sb_dma
; @timing: dependent
; @budget: 2600000
org 100h
%include "lib.inc"
start:
    call sb_reset
    jc .nosb
    call buf_seg
    mov es, ax
    xor di, di
    mov cx, 2048
.g: mov ax, di
    and al, 31
    shl al, 2
    stosb
    loop .g
    call sb_hook
    mov al, 40h
    call sb_write
    mov al, 131                 ; 8 kHz
    call sb_write
    mov cx, 2048 - 1
    mov al, 59h                 ; auto-init, read, channel 1
    call dma_setup
    mov al, 48h                 ; block size
    call sb_write
    mov al, (1024 - 1) & 0FFh
    call sb_write
    mov al, (1024 - 1) >> 8
    call sb_write
    mov al, 1Ch                 ; auto-init 8-bit output
    call sb_write
    mov ax, 40h
    mov fs, ax
    mov bx, [fs:6Ch]
.w: cmp word [cs:sbirqs], 4
    jae .done
    mov ax, [fs:6Ch]
    sub ax, bx
    cmp ax, 54
    jb .w
.done:
    mov al, 0DAh                ; exit auto-init
    call sb_write
    mov al, 0D0h                ; halt DMA
    call sb_write
    call sb_unhook
    cmp word [cs:sbirqs], 4
    jb .to
    PRINT 'SB AUTOINIT IRQS 4'
    EXIT 0
.to: PRINT 'SB TIMEOUT'
    EXIT 0
.nosb:
    PRINT 'SB NOT FOUND'
    EXIT 0
%include "sb.inc"
