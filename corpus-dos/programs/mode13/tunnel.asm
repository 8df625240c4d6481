; @desc: mode 13h tunnel: distance and angle of every pixel of one quadrant from an integer CORDIC (12 vectoring steps, 32-bit SAR by CL, [atab+ecx*2]), unsigned DIV for 1/r, mirrored to four quadrants by angle negation; 4 frames of XOR texture moving in depth and rotating, depth-shaded through the default palette; CRC of the last frame
; @tags: video.mode13h video.effects arith.real32_sib
; @budget: 8000000
org 100h
%include "lib.inc"
%macro HALF 2                   ; %1 = inc/dec of SI, %2 = negate the angle
    mov cx, 160
%%l:
    mov dl, [fs:si + 16000]
%if %2
    neg dl
%endif
    add dl, dh                  ; v = +-a + offset + tv
    mov al, [fs:si]             ; d
    movzx bx, al
    shr bl, 6
    add al, [tu]                ; u = d + tu
    xor al, dl
    and al, 15
    add al, [bases + bx]        ; depth shade: bright hue ring .. grey centre
    stosb
    %1 si
    loop %%l
%endmacro
start:
    call crc_init
    cld                         ; DF is not defined at entry
    mov ax, cs
    add ax, 1000h
    mov fs, ax                  ; tables: dist at 0, angle at 16000 (one quadrant, 160x100)
    xor di, di
    mov word [qy], 0
.ty:
    mov word [qx], 0
.tx:
    movzx eax, word [qx]        ; x = (2*qx+1)*16, y = (2*qy+1)*16 (pixel centres)
    lea eax, [eax*2 + 1]
    shl eax, 4
    movzx ebx, word [qy]
    lea ebx, [ebx*2 + 1]
    shl ebx, 4
    xor dx, dx                  ; z: angle, 65536 per turn
    xor ecx, ecx
.c: mov esi, eax
    sar esi, cl
    mov ebp, ebx
    sar ebp, cl
    test ebx, ebx
    js .neg
    add eax, ebp                ; rotate by -atan(2^-i)
    sub ebx, esi
    add dx, [atab + ecx*2]
    jmp .n
.neg:
    sub eax, ebp
    add ebx, esi
    sub dx, [atab + ecx*2]
.n: inc cx
    cmp cx, 12
    jb .c
    add dx, 128                 ; angle byte: 256 per turn, 0..64 in this quadrant
    mov [fs:di + 16000], dh
    mov ecx, eax                ; eax = 1.6468 * r * 16
    mov eax, 40000h
    xor edx, edx
    div ecx
    cmp eax, 255
    jbe .d
    mov al, 255
.d: mov [fs:di], al
    inc di
    inc word [qx]
    cmp word [qx], 160
    jb .tx
    inc word [qy]
    cmp word [qy], 100
    jb .ty

    mov ax, 13h
    int 10h
    push word 0A000h
    pop es
    mov byte [tu], 0
    mov byte [tv], 0
    mov bp, 4
.frame:
    xor di, di
    mov word [sy], 0
.row:
    mov ax, [sy]
    sub ax, 100
    jae .bottom
    not ax                      ; qy = 99 - sy
    imul si, ax, 160
    add si, 159                 ; left half: qx = 159 .. 0, angle = 128 + a
    mov dh, [tv]
    add dh, 128
    HALF dec, 0
    inc si                      ; right half: qx = 0 .. 159, angle = -a
    mov dh, [tv]
    HALF inc, 1
    jmp .nextrow
.bottom:
    imul si, ax, 160
    add si, 159                 ; left half: angle = 128 - a
    mov dh, [tv]
    add dh, 128
    HALF dec, 1
    inc si                      ; right half: angle = a
    mov dh, [tv]
    HALF inc, 0
.nextrow:
    inc word [sy]
    cmp word [sy], 200
    jb .row
    add byte [tu], 11
    add byte [tv], 5
    dec bp
    jnz .frame
    call crc_vram13
    jmp print_crc_exit

atab: dw 8192, 4836, 2555, 1297, 651, 326, 163, 81, 41, 20, 10, 5
bases: db 32, 104, 176, 16
qx: dw 0
qy: dw 0
sy: dw 0
tu: db 0
tv: db 0
