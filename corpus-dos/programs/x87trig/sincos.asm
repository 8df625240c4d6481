; @desc: x87 sine tables: FSIN and FSINCOS for 256 angles, scaled by 16384 and stored with FISTP (integer results, robust to last-bit differences), plus a 3D rotation of 8 cube vertices with FMUL/FADD
; @tags: x87.trig x87.rot3d x87.convert
; @budget: 47000
org 100h
%include "lib.inc"
start:
    call crc_init
    finit
    xor cx, cx
.l: mov [i], cx
    fild word [i]
    fldpi
    fmulp st1, st0
    fidiv word [c128]           ; angle = i*pi/128
    fld st0
    fsin
    fimul word [scale]
    fistp word [out]
    mov ax, [out]
    call crc_word
    fsincos                     ; st0 = cos, st1 = sin
    fimul word [scale]
    fistp word [out]
    fimul word [scale]
    fistp word [out + 2]
    mov ax, [out]
    call crc_word
    mov ax, [out + 2]
    call crc_word
    inc cx
    cmp cx, 256
    jb .l
    ; rotate cube vertices by 0.5 rad about Z then X
    mov si, verts
    mov cx, 8
.v: fld dword [si]              ; x
    fld dword [si + 4]          ; y
    fld dword [si + 8]          ; z
    ; x' = x c - y s ; y' = x s + y c
    fld st2
    fmul dword [cs05]
    fld st2
    fmul dword [sn05]
    fsubp st1, st0              ; x'
    fld st3
    fmul dword [sn05]
    fld st3
    fmul dword [cs05]
    faddp st1, st0              ; y'
    fimul word [c1000]
    fistp dword [out]
    fimul word [c1000]
    fistp dword [out + 4]
    fimul word [c1000]
    fistp dword [out + 8]
    fstp st0
    fstp st0
    mov eax, [out]
    call crc_dword
    mov eax, [out + 4]
    call crc_dword
    mov eax, [out + 8]
    call crc_dword
    add si, 12
    loop .v
    jmp print_crc_exit
i: dw 0
c128: dw 128
scale: dw 16384
c1000: dw 1000
out: dd 0, 0, 0
cs05: dd 0.87758256
sn05: dd 0.47942554
verts: dd -1.0,-1.0,-1.0, 1.0,-1.0,-1.0, -1.0,1.0,-1.0, 1.0,1.0,-1.0, -1.0,-1.0,1.0, 1.0,-1.0,1.0, -1.0,1.0,1.0, 1.0,1.0,1.0
