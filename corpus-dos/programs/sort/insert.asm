; @desc: insertion sort of 500 words moving elements with STD / REP MOVSW-free inner loops (backward scans)
; @tags: kernel.sort
; @budget: 660000
N equ 500
%include "sortbody.inc"
sort:
    mov bx, 2
.o: cmp bx, N*2
    jae .d
    mov ax, [arr + bx]
    mov si, bx
.i: test si, si
    jz .put
    mov dx, [arr + si - 2]
    cmp dx, ax
    jbe .put
    mov [arr + si], dx
    sub si, 2
    jmp .i
.put:
    mov [arr + si], ax
    add bx, 2
    jmp .o
.d: ret
arr: times N dw 0
