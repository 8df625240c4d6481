; @desc: mode 13h voxel landscape (Comanche style, integer): 256x256 height and colour maps in FS/GS segments built from nested sine lookups, per frame a rotating camera marches 90 growing depth steps, each step one unsigned DIV for scale/z and 320 columns stepped in 16.16 (IMUL, SAR, [ybuf+ecx*2]) drawing vertical spans front to back against a y-buffer; 4 frames; CRC of the last frame
; @tags: video.mode13h video.effects arith.real32_sib
; @budget: 12000000
org 100h
%include "lib.inc"
HORIZON equ 50
SCALE   equ 100
start:
    call crc_init
    cld                         ; DF is not defined at entry
    call build_sine
    call build_maps

    mov ax, 13h
    int 10h
    push word 0A000h
    pop es
    mov dword [camx], 128 << 16
    mov dword [camy], 200 << 16
    mov byte [frames], 4
.frame:
    xor di, di                  ; sky
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
    mov bx, [angle]             ; sin/cos of the view angle (2.14)
    and bx, 255
    add bx, bx
    movsx eax, word [sint + bx]
    mov [sinp], eax
    add bx, 128
    and bx, 510
    movsx eax, word [sint + bx]
    mov [cosp], eax
    mov eax, [camy]             ; camera height: terrain under the camera + 70
    shr eax, 8
    mov ebx, [camx]
    shr ebx, 16
    mov bl, bl
    mov bh, ah
    movzx ax, byte [fs:bx]
    add ax, 70
    mov [camh], ax
    mov dword [z], 6
    mov dword [dz], 1
.zstep:
    ; left end: (-cos*z - sin*z, sin*z - cos*z) + cam ; right end: (cos*z - sin*z, -sin*z - cos*z) + cam
    mov eax, [cosp]
    imul eax, [z]
    mov [cz], eax               ; cos*z (2.14 -> shift 2 for 16.16)
    mov eax, [sinp]
    imul eax, [z]
    mov [sz_], eax
    mov esi, [cz]
    neg esi
    sub esi, [sz_]
    shl esi, 2
    add esi, [camx]             ; plx
    mov ebp, [sz_]
    sub ebp, [cz]
    shl ebp, 2
    add ebp, [camy]             ; ply
    mov eax, [cz]               ; dx = 2*cos*z*4 / 320
    shl eax, 3
    cdq
    mov ecx, 320
    idiv ecx
    mov [ddx], eax
    mov eax, [sz_]              ; dy = -2*sin*z*4 / 320
    neg eax
    shl eax, 3
    cdq
    idiv ecx
    mov [ddy], eax
    mov eax, SCALE << 16        ; invz = SCALE * 65536 / z
    xor edx, edx
    div dword [z]
    mov [invz], eax
    xor ecx, ecx                ; column
.col:
    mov ebx, ebp
    shr ebx, 8
    mov eax, esi
    shr eax, 16
    mov bl, al                  ; bx = y:x
    movzx eax, byte [fs:bx]
    mov dl, [gs:bx]
    neg eax
    add ax, [camh]
    cwde
    imul eax, [invz]
    sar eax, 16
    add eax, HORIZON
    jns .pos
    xor eax, eax
.pos:
    mov bx, [ybuf + ecx*2]
    cmp ax, bx
    jge .hidden
    mov [ybuf + ecx*2], ax
    sub bx, ax
    mov dh, bl                  ; span length
    imul di, ax, 320
    add di, cx
.span:
    mov [es:di], dl
    add di, 320
    dec dh
    jnz .span
.hidden:
    add esi, [ddx]
    add ebp, [ddy]
    inc cx
    cmp cx, 320
    jb .col
    mov eax, [dz]
    add [z], eax
    mov eax, [z]
    shr eax, 5
    inc eax
    mov [dz], eax
    cmp dword [z], 400
    jb .zstep
    ; move forward along the view direction and turn
    mov eax, [sinp]
    shl eax, 3
    sub [camx], eax
    mov eax, [cosp]
    shl eax, 3
    sub [camy], eax
    add word [angle], 6
    dec byte [frames]
    jnz .frame
    call crc_vram13
    jmp print_crc_exit

%include "voxmap.inc"
%include "sine.inc"
align 4
camx: dd 0
camy: dd 0
sinp: dd 0
cosp: dd 0
z: dd 0
dz: dd 0
cz: dd 0
sz_: dd 0
ddx: dd 0
ddy: dd 0
invz: dd 0
camh: dw 0
angle: dw 0
frames: db 0
sint: times 256 dw 0
ybuf: times 320 dw 0
