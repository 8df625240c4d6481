; @desc: nested and multi-exit loop shapes: a triangular 3-deep nest (DEC/JNZ outside, INC/CMP/JB middle, LOOP inside), a while loop entered at its bottom test, a loop with BREAK and CONTINUE edges and an if/else diamond, a loop calling a function with its own loop, a 70000-trip 32-bit DEC ECX/JNZ loop, loops whose trip counts come from data; CRC of all accumulators
; @tags: cf.loop_shapes
; @budget: 400000
org 100h
%include "lib.inc"
start:
    call crc_init
    cld                         ; DF is not defined at entry
    ; triangular nest: for i = 12 downto 1 / for j = 0 below i / LOOP k = j+1
    xor edx, edx
    mov bp, 12
.o: xor bx, bx
.m: mov cx, bx
    inc cx
.i: add dx, cx
    xor dx, bp
    rol edx, 1
    loop .i
    inc bx
    cmp bx, bp
    jb .m
    dec bp
    jnz .o
    call feed
    ; while (x < limit) x = x*3/2 + 1; entered through the test at the bottom
    mov ax, 1
    xor dx, dx
    jmp .wtest
.wbody:
    mov cx, ax
    shr cx, 1
    add ax, cx
    inc ax
    inc dx
.wtest:
    cmp ax, 40000
    jb .wbody
    shl edx, 16
    mov dx, ax
    call feed
    ; for i in 0..199: continue when i%3==0, break when running sum > 9000, if/else on parity
    xor cx, cx
    xor edx, edx
    xor bx, bx
.f: mov ax, cx
    mov si, 3
    xor dx, dx
    div si
    test dx, dx
    jz .cont
    test cl, 1
    jz .even
    add bx, cx                  ; odd
    jmp .join
.even:
    lea bx, [bx + 2]
    xor bx, cx                  ; even
.join:
    cmp bx, 9000
    ja .brk
.cont:
    inc cx
    cmp cx, 200
    jb .f
.brk:
    movzx edx, bx
    shl ecx, 16
    or edx, ecx
    call feed
    ; loop calling a function with its own loop (popcount of i*i)
    xor edi, edi
    mov si, 1
.call:
    mov ax, si
    mul si
    call popcnt
    add di, ax
    rol edi, 2
    inc si
    cmp si, 300
    jbe .call
    mov edx, edi
    call feed
    ; 70000 trips on a 32-bit counter
    mov ecx, 70000
    mov edx, 1
.big:
    add edx, ecx
    ror edx, 1
    dec ecx
    jnz .big
    call feed
    ; data-driven trip counts: each table entry is the count of an inner loop
    xor edx, edx
    mov si, trips
.t: lodsb
    test al, al
    jz .tend
    movzx cx, al
.ti:
    add dx, cx
    imul edx, edx, 5
    dec cx
    jnz .ti
    jmp .t
.tend:
    call feed
    jmp print_crc_exit

popcnt:                         ; ax = popcount(dx:ax)
    push cx
    push dx
    xor cx, cx
.p: test ax, ax
    jz .pd
    mov bx, ax
    dec bx
    and ax, bx
    inc cx
    jmp .p
.pd:
    pop dx
.q: test dx, dx
    jz .qd
    mov bx, dx
    dec bx
    and dx, bx
    inc cx
    jmp .q
.qd:
    mov ax, cx
    pop cx
    ret
feed:
    push eax
    mov eax, edx
    call crc_dword
    pop eax
    ret
trips: db 3, 1, 9, 27, 2, 200, 5, 0
