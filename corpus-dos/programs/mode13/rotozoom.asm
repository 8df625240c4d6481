; @desc: mode 13h rotozoomer: a 256x256 texture in its own segment read through FS:[BX] (BH = v, BL = u: 8.8 wrap for free), 16.16 fixed-point U/V stepping in 32-bit registers with per-row and per-pixel deltas from an integer sine table (Minsky circle; IMUL, SHRD), 5 frames of rotation and zoom; CRC of the last frame
; @tags: video.mode13h video.effects mem.fs_gs
; @budget: 6400000
org 100h
%include "lib.inc"
start:
    call crc_init
    cld                         ; DF is not defined at entry
    call build_sine
    ; texture: 256x256 bytes at CS+1000h: rings XOR checker, hue ring colours 32..55 and 104..127
    mov ax, cs
    add ax, 1000h
    mov fs, ax
    mov es, ax
    xor di, di
.t: mov ax, di                  ; al = u, ah = v
    mov dl, al
    xor dl, ah
    and dl, 20h                 ; 32x32 checker
    mov ax, di
    sub al, 128
    sub ah, 128
    imul al
    mov cx, ax                  ; (u-128)^2
    mov ax, di
    mov al, ah
    sub al, 128
    imul al
    add ax, cx                  ; r^2
    shr ax, 8                   ; rings
    and al, 15
    add al, 32
    test dl, dl
    jz .tc
    add al, 72
.tc:
    stosb
    test di, di                 ; until DI wraps to 0: 65536 texels
    jnz .t
    mov ax, 13h
    int 10h
    push word 0A000h
    pop es
    mov word [ang], 0
    mov byte [frames], 5
.frame:
    ; zoom z = 1.5 + sin(2*ang)/2 (16.16); du = cos*z, dv = sin*z per pixel
    mov bx, [ang]
    add bx, bx
    and bx, 510
    movsx eax, word [sint + bx]     ; 16384 * sin(2a)
    add eax, 3 * 16384
    shl eax, 1                       ; z in 16.16 (0.5 .. 1 .. 2 scaled): 1.0 = 65536
    mov [zoom], eax
    mov bx, [ang]
    and bx, 255
    add bx, bx
    movsx eax, word [sint + bx]      ; sin a
    imul dword [zoom]
    shrd eax, edx, 14
    mov [dv], eax
    add bx, 128                      ; cos a = sin(a + 64)
    and bx, 510
    movsx eax, word [sint + bx]
    imul dword [zoom]
    shrd eax, edx, 14
    mov [du], eax
    ; start: u0 = 128 - 160*du + 100*dv, v0 = 128 - 160*dv - 100*du (centre of the texture)
    mov eax, [du]
    imul eax, eax, -160
    mov ecx, [dv]
    imul ecx, ecx, 100
    add eax, ecx
    add eax, 128 << 16
    mov [ru], eax
    mov eax, [dv]
    imul eax, eax, -160
    mov ecx, [du]
    imul ecx, ecx, 100
    sub eax, ecx
    add eax, 128 << 16
    mov [rv], eax
    xor di, di
    mov dx, 200
.row:
    mov esi, [ru]
    mov ebp, [rv]
    mov cx, 320
.px:
    mov ebx, ebp
    shr ebx, 8                       ; bh = v integer part
    mov eax, esi
    shr eax, 16
    mov bl, al                       ; bl = u integer part
    mov al, [fs:bx]
    stosb
    add esi, [du]
    add ebp, [dv]
    loop .px
    mov eax, [dv]                    ; next row: (u, v) += (-dv, du)
    sub [ru], eax
    mov eax, [du]
    add [rv], eax
    dec dx
    jnz .row
    add word [ang], 13
    dec byte [frames]
    jnz .frame
    call crc_vram13
    jmp print_crc_exit
%include "sine.inc"
align 4
zoom: dd 0
du: dd 0
dv: dd 0
ru: dd 0
rv: dd 0
ang: dw 0
frames: db 0
sint: times 256 dw 0
