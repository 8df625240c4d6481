; @desc: mode 13h voxel landscape with x87 projection: the maps of voxel, but the camera, the depth-step end points, the per-column 16.16-free stepping (FADD ST(i) with FXCH on a 4-deep stack), map indices (FISTP/FIST m32, nearest) and span heights (FILD m16, FMUL m64, then FLDCW round-down / FISTP m16 / FLDCW back: the _ftol floor) are doubles under a 53-bit precision control word (so host-double FPUs and an 80-bit x87 agree); 4 frames; CRC of the last frame
; @tags: video.mode13h video.effects x87.convert
; @budget: 13000000
org 100h
%include "lib.inc"
HORIZON equ 50
start:
    call crc_init
    cld                         ; DF is not defined at entry
    call build_sine
    call build_maps
    mov ax, 13h
    int 10h
    push word 0A000h
    pop es
    fninit
    fldcw [cw_near]
    mov byte [frames], 4
.frame:
    xor di, di
    mov eax, 35353535h
    mov cx, 16000
    rep stosd
    mov di, ybuf
    mov ax, 200
    mov cx, 320
    push es
    push ds
    pop es
    rep stosw
    pop es
    mov bx, [angle]             ; sin, cos as doubles: table / 16384 (exact)
    and bx, 255
    add bx, bx
    fild word [sint + bx]
    fmul qword [q14]
    fstp qword [sinp]
    add bx, 128
    and bx, 510
    fild word [sint + bx]
    fmul qword [q14]
    fstp qword [cosp]
    fld qword [camx]            ; camera height: terrain under the camera + 70
    fistp dword [ix]
    fld qword [camy]
    fistp dword [iy]
    mov bl, [ix]
    mov bh, [iy]
    movzx ax, byte [fs:bx]
    add ax, 70
    mov [camh], ax
    mov word [z], 6
    mov word [dz], 1
.zstep:
    fild word [z]
    fld st0
    fmul qword [cosp]           ; st0 = c = cos*z, st1 = z
    fxch
    fmul qword [sinp]           ; st0 = s = sin*z, st1 = c
    ; dy = -2s/320, dx = 2c/320, ply = camy + s - c, plx = camx - c - s
    fld st0
    fmul qword [m2_320]
    fld st2
    fmul qword [p2_320]         ; st0 dx, st1 dy, st2 s, st3 c
    fxch st2                    ; st0 s, st1 dy, st2 dx, st3 c
    fld st0
    fsub st0, st4
    fadd qword [camy]           ; st0 ply, st1 s, st2 dy, st3 dx, st4 c
    fxch st4                    ; st0 c, st4 ply
    faddp st1, st0              ; st0 c+s, st1 dy, st2 dx, st3 ply
    fsubr qword [camx]          ; st0 plx = camx - (c+s)
    fxch st1                    ; st0 dy, st1 plx, st2 dx, st3 ply
    fxch st3                    ; st0 ply, st1 plx, st2 dx, st3 dy
    fild word [z]               ; invz = SCALE / z
    fdivr qword [scale]
    fstp qword [invz]
    xor cx, cx
.col:
    fld st1
    fistp dword [ix]            ; round to nearest: plx
    fist dword [iy]             ; ply
    mov bl, [ix]
    mov bh, [iy]
    movzx ax, byte [fs:bx]
    mov dl, [gs:bx]
    neg ax
    add ax, [camh]
    mov [dh16], ax
    fild word [dh16]
    fmul qword [invz]
    fldcw [cw_down]             ; the compilers' _ftol dance: floor through RC = down
    fistp word [hs]             ; floor((camh - h) * SCALE / z)
    fldcw [cw_near]
    mov ax, [hs]
    add ax, HORIZON
    jns .pos
    xor ax, ax
.pos:
    mov si, cx
    add si, si
    mov bx, [ybuf + si]
    cmp ax, bx
    jge .hidden
    mov [ybuf + si], ax
    sub bx, ax
    mov dh, bl
    imul di, ax, 320
    add di, cx
.span:
    mov [es:di], dl
    add di, 320
    dec dh
    jnz .span
.hidden:
    fadd st0, st3               ; ply += dy
    fxch
    fadd st0, st2               ; plx += dx
    fxch
    inc cx
    cmp cx, 320
    jb .col
    fstp st0
    fstp st0
    fstp st0
    fstp st0
    mov ax, [dz]
    add [z], ax
    mov ax, [z]
    shr ax, 5
    inc ax
    mov [dz], ax
    cmp word [z], 400
    jb .zstep
    fld qword [sinp]            ; move forward and turn
    fmul qword [step]
    fsubr qword [camx]
    fstp qword [camx]
    fld qword [cosp]
    fmul qword [step]
    fsubr qword [camy]
    fstp qword [camy]
    add word [angle], 6
    dec byte [frames]
    jnz .frame
    call crc_vram13
    jmp print_crc_exit
%include "sine.inc"
%include "voxmap.inc"
align 8
cw_near: dw 027Fh               ; all exceptions masked, precision 53 bits, round to nearest
cw_down: dw 067Fh               ; the same, rounding down (only around FISTP)
align 8
q14: dq 0.00006103515625        ; 1/16384
m2_320: dq -0.00625             ; -2/320
p2_320: dq 0.00625
scale: dq 100.0
step: dq 8.0
camx: dq 128.0
camy: dq 200.0
sinp: dq 0.0
cosp: dq 0.0
invz: dq 0.0
ix: dd 0
iy: dd 0
z: dw 0
dz: dw 0
dh16: dw 0
hs: dw 0
camh: dw 0
angle: dw 0
frames: db 0
sint: times 256 dw 0
ybuf: times 320 dw 0
