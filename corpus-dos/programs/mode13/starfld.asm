; @desc: mode 13h 3D starfield: 256 stars in 16-bit fixed point, each frame erases its previous pixel, moves toward the viewer and projects with 32-bit IDIV (sx = 160 + 128*x/z), respawns from a 32-bit LCG when behind the viewer or off screen, colour from depth (grey ramp); 48 frames; CRC of the last frame
; @tags: video.mode13h video.effects arith.muldiv
; @budget: 1100000
org 100h
%include "lib.inc"
NSTAR equ 256
start:
    call crc_init
    cld                         ; DF is not defined at entry
    mov dword [seed], 2463534242
    xor bx, bx
.init:
    call spawn
    call rnd                    ; initial depth spread over 1..1023
    and ax, 1023
    or ax, 1
    mov [sz + bx], ax
    mov word [spos + bx], 0FFFFh
    add bx, 2
    cmp bx, NSTAR * 2
    jb .init
    mov ax, 13h
    int 10h
    push word 0A000h
    pop es
    mov byte [frames], 48
.frame:
    xor bx, bx
.star:
    mov di, [spos + bx]         ; erase the previous pixel
    cmp di, 0FFFFh
    je .noerase
    mov byte [es:di], 0
.noerase:
    mov ax, [sz + bx]
    sub ax, [speed]
    jg .alive
.respawn:
    call spawn
    mov word [sz + bx], 1023
    mov word [spos + bx], 0FFFFh
    jmp .nextstar
.alive:
    mov [sz + bx], ax
    movzx ecx, ax               ; z
    movsx eax, word [sx + bx]   ; x * 128 / z (32-bit IDIV, truncating toward 0)
    shl eax, 7
    cdq
    idiv ecx
    add eax, 160
    cmp eax, 320
    jae .respawn                ; off screen (unsigned: negative too)
    mov di, ax
    movsx eax, word [sy + bx]
    shl eax, 7
    cdq
    idiv ecx
    add eax, 100
    cmp eax, 200
    jae .respawn
    imul ax, ax, 320
    add di, ax
    mov [spos + bx], di
    mov ax, cx                  ; colour: near = bright (31), far = dark (17)
    shr ax, 6
    mov ah, 31
    sub ah, al
    mov [es:di], ah
.nextstar:
    add bx, 2
    cmp bx, NSTAR * 2
    jb .star
    inc word [speed]            ; accelerate: 4, 5, ... 51
    dec byte [frames]
    jnz .frame
    call crc_vram13
    jmp print_crc_exit

spawn:                          ; new x, y in -1024..1023
    call rnd
    sar ax, 5
    mov [sx + bx], ax
    call rnd
    sar ax, 5
    mov [sy + bx], ax
    ret
rnd:                            ; ax = high word of the next LCG state
    mov eax, [seed]
    imul eax, eax, 1664525
    add eax, 1013904223
    mov [seed], eax
    shr eax, 16
    ret

align 4
seed: dd 0
speed: dw 4
frames: db 0
sx: times NSTAR dw 0
sy: times NSTAR dw 0
sz: times NSTAR dw 0
spos: times NSTAR dw 0
