; @desc: heapsort of 3000 words (sift-down loops with computed child indices)
; @tags: kernel.sort
; @budget: 1300000
N equ 3000
%include "sortbody.inc"
sort:
    mov cx, N / 2
.b: dec cx
    mov bx, cx
    mov dx, N
    call sift
    test cx, cx
    jnz .b
    mov dx, N
.e: dec dx
    jz .d
    mov ax, [arr]
    mov si, dx
    shl si, 1
    xchg ax, [arr + si]
    mov [arr], ax
    xor bx, bx
    call sift
    jmp .e
.d: ret
sift:                       ; bx = root, dx = size
    push cx
.s: mov si, bx
    shl si, 1
    inc si                  ; child = 2*root+1
    cmp si, dx
    jae .x
    mov di, si
    inc di
    cmp di, dx
    jae .c
    shl di, 1
    mov ax, [arr + di]
    shr di, 1
    push si
    shl si, 1
    cmp ax, [arr + si]
    pop si
    jbe .c
    mov si, di
.c: mov di, si
    shl di, 1
    mov ax, [arr + di]
    push bx
    shl bx, 1
    cmp [arr + bx], ax
    jae .y
    xchg ax, [arr + bx]
    mov [arr + di], ax
    pop bx
    mov bx, si
    jmp .s
.y: pop bx
.x: pop cx
    ret
arr: times N dw 0
