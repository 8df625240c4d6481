; @desc: bottom-up merge sort of 4096 words between two segments (DS and ES buffers, REP MOVSW copy-back)
; @tags: kernel.sort mem.rep_string
; @budget: 1900000
N equ 4096
%include "sortbody.inc"
sort:
    mov ax, cs
    add ax, 1000h
    mov es, ax
    mov bp, 1                  ; width in elements
.w: cmp bp, N
    jae .d
    xor bx, bx                 ; left start (elements)
.m: cmp bx, N
    jae .cp
    ; i = bx, mid = min(bx+bp, N), hi = min(bx+2bp, N)
    mov si, bx
    mov dx, bx
    add dx, bp                 ; mid
    cmp dx, N
    jbe .m1
    mov dx, N
.m1: mov cx, dx
    add cx, bp                 ; hi
    cmp cx, N
    jbe .m2
    mov cx, N
.m2: mov di, bx                ; out index
    push bx
    mov bx, dx                 ; j = mid
.k: cmp di, cx
    jae .mdone
    cmp si, dx
    jae .takej
    cmp bx, cx
    jae .takei
    push si
    push bx
    shl si, 1
    shl bx, 1
    mov ax, [arr + si]
    cmp ax, [arr + bx]
    pop bx
    pop si
    ja .takej
.takei:
    push si
    shl si, 1
    mov ax, [arr + si]
    pop si
    inc si
    jmp .st
.takej:
    push bx
    shl bx, 1
    mov ax, [arr + bx]
    pop bx
    inc bx
.st: push di
    shl di, 1
    mov [es:di], ax
    pop di
    inc di
    jmp .k
.mdone:
    pop bx
    add bx, bp
    add bx, bp
    jmp .m
.cp: push ds
    push es
    push ds
    push es
    pop ds
    pop es
    xor si, si
    mov di, arr
    mov cx, N
    cld
    rep movsw
    pop es
    pop ds
    shl bp, 1
    jmp .w
.d: ret
arr: times N dw 0
