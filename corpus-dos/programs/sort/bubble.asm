; @desc: bubble sort of 300 words with an early-exit swapped flag (XCHG with memory)
; @tags: kernel.sort
; @budget: 630000
N equ 300
%include "sortbody.inc"
sort:
.pass:
    xor dx, dx
    mov si, arr
    mov cx, N - 1
.l: mov ax, [si]
    cmp ax, [si + 2]
    jbe .n
    xchg ax, [si + 2]
    mov [si], ax
    inc dx
.n: add si, 2
    loop .l
    test dx, dx
    jnz .pass
    ret
arr: times N dw 0
