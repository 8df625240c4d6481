; @desc: the LOOP family as loop shapes: LOOP over trip counts 1..100 and CX=0 (65536 trips), LOOPE/LOOPNE scans ending by count or by ZF, LOOP with a 67h prefix counting ECX (00010005h: 65541 trips, not 5), JCXZ vs JECXZ with CX=0 and ECX!=0, `loop $` spinning on itself, LOOP around a near call; flags across LOOP (it changes none); CRC of ECX, accumulators and defined flags
; @tags: cf.loop_shapes
; @budget: 350000
org 100h
%include "lib.inc"
start:
    call crc_init
    cld                         ; DF is not defined at entry
    ; LOOP with counts from a table; the body's flags survive LOOP
    xor si, si
.c: mov cx, [counts + si]
    xor edx, edx
.l1:
    add dx, cx
    rol edx, 3
    loop .l1
    pushf
    pop dx                      ; flags of the last ROL... (CF only defined)
    and dx, 1
    call feed
    add si, 2
    cmp si, ncounts * 2
    jb .c
    ; CX = 0: 65536 trips
    xor cx, cx
    xor edx, edx
.l2:
    inc edx
    loop .l2
    call feed
    ; LOOPE: run while equal; stops at the first difference or when CX ends
    mov si, arr
    mov cx, 20
.l3:
    lodsb
    cmp al, 5
    loope .l3
    pushf
    pop dx
    and dx, F_SZPC
    call feed
    mov dx, si
    call feed
    ; LOOPNE: run until a match
    mov si, arr
    mov cx, 20
.l4:
    lodsb
    cmp al, 9
    loopne .l4
    pushf
    pop dx
    and dx, F_SZPC
    call feed
    mov dx, si
    call feed
    ; LOOPNE that runs out of count (no match)
    mov si, arr
    mov cx, 6
.l5:
    lodsb
    cmp al, 77
    loopne .l5
    mov dx, si
    call feed
    ; 67h LOOP: counts ECX, so 00010005h trips
    mov ecx, 00010005h
    xor edx, edx
.l6:
    add edx, 3
    a32 loop .l6
    call feed
    ; 16-bit LOOP with the same ECX: CX only, upper half kept
    mov ecx, 00010005h
    xor edx, edx
.l7:
    add edx, 3
    loop .l7
    call feed
    ; JCXZ / JECXZ with CX = 0, ECX != 0
    mov ecx, 00070000h
    xor dx, dx
    jcxz .z1
    or dl, 1
.z1:
    jecxz .z2
    or dl, 2
.z2:
    xor ecx, ecx
    jecxz .z3
    or dl, 4
.z3:
    call feed
    ; LOOP to itself
    mov cx, 1000
    loop $
    mov dx, cx
    call feed
    ; LOOP around a near call that has its own LOOP
    mov cx, 12
    xor edx, edx
.l8:
    push cx
    call inner
    pop cx
    loop .l8
    call feed
    ; LOOPE/LOOPNE with a 67h prefix: ECX-counted with a ZF exit
    mov ecx, 00010000h
    xor si, si
.l9:
    inc si
    cmp si, 300
    a32 loopne .l9
    pushf
    pop dx
    and dx, F_SZPC
    call feed
    mov dx, si
    call feed
    jmp print_crc_exit

inner:                          ; cx = outer count: edx += sum(1..cx) * 7
.i: lea edx, [edx + ecx*4]
    lea edx, [edx + ecx*2]
    add edx, ecx
    loop .i
    ret
feed:                           ; feed EDX and ECX
    push eax
    mov eax, edx
    call crc_dword
    mov eax, ecx
    call crc_dword
    pop eax
    ret
counts: dw 1, 2, 3, 7, 16, 100
ncounts equ ($ - counts) / 2
arr: db 5, 5, 5, 5, 7, 5, 5, 9, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5
