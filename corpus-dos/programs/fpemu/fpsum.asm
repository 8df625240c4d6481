; @desc: emulated-FPU call sites (CD 34h-3Dh) in a loop: first pass goes through the INT handlers that patch each site to FWAIT+x87 and re-execute; later passes run native x87; integer-exact results (sum of 3*i for i = 1..140 = 29610, inside the signed word FISTP stores: 1..200 overflowed, which DOSBox 0.74 wraps where the x87 stores 8000h)
; @tags: smc.fpu_emu x87.convert
; @budget: 16000
org 100h
%include "lib.inc"
%include "fpemu.inc"
start:
    call crc_init
    call fp_install
    call fp_arm
    finit
    mov cx, 140                      ; 3 * 140 * 141 / 2 = 29610 < 32768
    mov word [acc], 0
.l:
    mov [ival], cx
    FP fild word [ival]
    FP fimul word [mul3]
    FP fiadd word [acc]
    FPW
    FP fistp word [acc]
    FPW
    loop .l
    call fp_remove
    mov ax, [acc]
    call crc_word
    mov ax, [cs:fp_hits]
    call crc_word
    mov si, start
    mov cx, 120
    call crc_buf                     ; the patched sites
    jmp print_crc_exit
ival: dw 0
acc: dw 0
mul3: dw 3
%include "fpemucode.inc"
