; @desc: counts 20 vertical retraces by polling 3DAh bit 3 (wait for the end of one, then the start of the next), then prints a fixed line
; @tags: wait.retrace
; @timing: dependent
; @budget: 1500000
org 100h
%include "lib.inc"
start:
    mov dx, 3DAh
    mov cx, 20
.f:
.a: in al, dx
    test al, 8
    jnz .a
.b: in al, dx
    test al, 8
    jz .b
    loop .f
    PRINT 'RETRACE 20'
    EXIT 0
