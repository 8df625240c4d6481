; @desc: irreducible and unusual loop shapes: a two-entry loop (jumped into its middle on odd data), back edges through JMP BX, RET to a pushed address and JMP [mem], two loops sharing one latch block, a back edge into the middle of a straight-line run (mid-block entry), a loop that alternately enters one byte sequence at two offsets (B8 40 90 = MOV AX,9040h / INC AX; NOP), a 2-instruction DEC/JNZ self loop; CRC of the accumulators
; @tags: cf.loop_shapes cf.jump_table
; @budget: 31000
org 100h
%include "lib.inc"
start:
    call crc_init
    cld                         ; DF is not defined at entry
    ; two-entry loop: odd elements enter at .mid
    xor edx, edx
    xor ax, ax
    xor si, si
.e: mov al, [data + si]
    test al, 1
    jnz .mid
.top:
    add dx, ax
    rol dx, 3
.mid:
    xor dl, al
    inc dx
    inc si
    cmp si, ndata
    jae .eout
    mov al, [data + si]
    test al, 2
    jz .top                     ; back edge to .top, other entries go through .e
    jmp .e
.eout:
    call feed
    ; back edge through JMP BX
    mov cx, 500
    xor edx, edx
    mov bx, .rb
.rb:
    add edx, ecx
    imul edx, edx, 3
    dec cx
    jz .rbout
    jmp bx
.rbout:
    call feed
    ; back edge through RET to a pushed address
    mov cx, 400
    xor edx, edx
.rr:
    sub edx, ecx
    ror edx, 5
    dec cx
    jz .rrout
    push word .rr
    ret
.rrout:
    call feed
    ; back edge through JMP [mem]
    mov cx, 300
    xor edx, edx
    mov word [vec], .rm
.rm:
    xor edx, ecx
    add edx, edx
    adc edx, 0
    dec cx
    jz .rmout
    jmp [vec]
.rmout:
    call feed
    ; two loops sharing one latch
    xor edx, edx
    mov cx, 100
    mov di, 1                   ; 1: loop A, 2: loop B
.la:
    add dx, 7
    jmp .latch
.lb:
    sub dx, 3
    rol dx, 1
.latch:
    dec cx
    jz .lout
    cmp di, 1
    jne .lb
    cmp cx, 50
    ja .la
    mov di, 2
    jmp .lb
.lout:
    call feed
    ; back edge into the middle of a straight run
    xor edx, edx
    mov cx, 200
    add edx, 11                 ; executed once
    rol edx, 4                  ; executed once
.midrun:
    add edx, ecx                ; loop starts here
    xor edx, 5A5Ah
    dec cx
    jnz .midrun
    call feed
    ; one byte sequence entered at two offsets: even trips MOV AX,9040h, odd trips INC AX / NOP
    xor edx, edx
    mov cx, 64
.ov:
    xor ax, ax
    test cl, 1
    jnz .odd
    jmp .seq
.odd:
    jmp .seq + 1
.seq:
    db 0B8h, 40h, 90h           ; mov ax, 9040h  |  (from +1) inc ax; nop
    add dx, ax
    rol edx, 1
    loop .ov
    call feed
    ; two-instruction self loop
    mov cx, 3000
.s: dec cx
    jnz .s
    mov dx, cx
    call feed
    jmp print_crc_exit
feed:
    push eax
    mov eax, edx
    call crc_dword
    pop eax
    ret
vec: dw 0
data: db 4, 7, 2, 2, 9, 12, 3, 6, 1, 8, 10, 13, 14, 5, 0, 11, 15, 2, 3, 1
ndata equ $ - data
