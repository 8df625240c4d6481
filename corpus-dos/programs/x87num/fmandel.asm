; @desc: floating-point Mandelbrot (x87, 64x40 grid, 40 iterations) with FCOM/FNSTSW AX/SAHF escape test, iteration counts CRC'd; then FBSTP/FBLD and FIST rounding-mode conversions
; @tags: x87.mandel x87.compare x87.convert
; @budget: 940000
org 100h
%include "lib.inc"
start:
    call crc_init
    finit
    xor dx, dx
.y: xor cx, cx
.x: mov [ix], cx
    mov [iy], dx
    fild word [ix]
    fidiv word [c20]
    fsub dword [f2]             ; cr = x/20 - 2
    fild word [iy]
    fidiv word [c16]
    fsub dword [f125]           ; ci = y/16 - 1.25
    fldz
    fldz                        ; st0 = zi, st1 = zr, st2 = ci, st3 = cr
    xor bx, bx
.it: fld st1
    fmul st0, st0               ; zr^2
    fld st1
    fmul st0, st0               ; zi^2
    fld st1
    fadd st0, st1
    fcomp dword [f4]
    fnstsw ax
    sahf
    ja .esc2
    fsubp st1, st0              ; zr^2 - zi^2
    fadd st0, st4               ; + cr
    fxch st2                    ; st0 = zr_old? reorder: st1 = zi, st2 = new zr
    fmulp st1, st0              ; zr*zi ... (st0 = zr*zi)
    fadd st0, st0
    fadd st0, st2               ; + ci  -> new zi
    fxch st1                    ; st0 = new zr, st1 = new zi
    fxch st1
    inc bx
    cmp bx, 40
    jb .it
    jmp .done
.esc2:
    fstp st0
    fstp st0
.done:
    fstp st0
    fstp st0
    fstp st0
    fstp st0
    mov al, bl
    call crc_byte
    inc cx
    cmp cx, 64
    jb .x
    inc dx
    cmp dx, 40
    jb .y
    ; conversions
    fild dword [big]
    fbstp [bcd]
    mov si, bcd
    mov cx, 10
    call crc_buf
    fbld [bcd]
    fchs
    fistp dword [out]
    mov eax, [out]
    call crc_dword
    mov si, rnd
    mov cx, 4
.r: fldcw [si]
    fld dword [f25]
    fistp word [out]
    fld dword [fm25]
    fistp word [out + 2]
    mov eax, [out]
    call crc_dword
    add si, 2
    loop .r
    fldcw [rnd]
    jmp print_crc_exit
ix: dw 0
iy: dw 0
c20: dw 20
c16: dw 16
f2: dd 2.0
f125: dd 1.25
f4: dd 4.0
f25: dd 2.5
fm25: dd -2.5
big: dd 123456789
bcd: times 10 db 0
out: dd 0
rnd: dw 037Fh, 077Fh, 0B7Fh, 0F7Fh
