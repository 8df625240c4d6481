; @desc: Shell sort (gaps 701 301 132 57 23 10 4 1) of 3000 words with 32-bit scaled-index addressing
; @tags: kernel.sort arith.real32_sib
; @budget: 810000
N equ 3000
%include "sortbody.inc"
sort:
    mov si, gaps
.g: lodsw
    test ax, ax
    jz .d
    movzx ebp, ax              ; gap
    mov ebx, ebp               ; i = gap
.i: cmp ebx, N
    jae .g
    mov ax, [arr + ebx*2]
    mov edi, ebx
.j: cmp edi, ebp
    jb .put
    mov ecx, edi
    sub ecx, ebp
    mov dx, [arr + ecx*2]
    cmp dx, ax
    jbe .put
    mov [arr + edi*2], dx
    mov edi, ecx
    jmp .j
.put:
    mov [arr + edi*2], ax
    inc ebx
    jmp .i
.d: ret
gaps: dw 701, 301, 132, 57, 23, 10, 4, 1, 0
arr: times N dw 0
