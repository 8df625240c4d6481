; SMCBENCH: the self-modifying-code shapes L1's policy is measured on, in
; four phases, each printing a 16-bit sum:
;  A  a loop that patches its own immediate on every iteration (volatile)
;  B  an FP-emulator-like rewrite: 256 INT sites rewritten once each into
;     plain code, then run many times (patched once, compiled for good)
;  C  an overlay: a routine copied over itself (two versions alternating)
;     every 2000 calls, 200 times (code reloaded after long use)
;  D  data stored next to code, in the same bytes' page (per-byte bits)
        org 100h
start:
        ; ---- A: 100000 self-patching iterations
        xor dx, dx
        mov cx, 50000
        mov bx, 2
.a:     mov ax, cx
        add ax, bx
        mov [.imm+2], ax          ; patch the ADD below
.imm:   add dx, 1234h
        dec bx
        jnz .a
        mov bx, 2
        loop .a
        mov ax, dx
        call hex
        ; ---- B: build 256 sites "INT 60h; NOP" then run them 200 times
        xor ax, ax
        mov es, ax
        mov word [es:60h*4], patch60
        mov [es:60h*4+2], cs
        push cs
        pop es
        mov di, sites
        mov cx, 256
.b0:    mov ax, 60CDh              ; INT 60h
        stosw
        mov al, 90h                ; NOP
        stosb
        loop .b0
        mov al, 0C3h               ; RET
        stosb
        xor dx, dx
        mov bp, 200
.b1:    call sites
        dec bp
        jnz .b1
        mov ax, dx
        call hex
        ; ---- C: overlay reloaded 200 times, called 2000 times each
        xor dx, dx
        mov bp, 200
.c0:    mov si, ver1
        test bp, 1
        jz .c1
        mov si, ver2
.c1:    mov di, ovl
        mov cx, verlen
        rep movsb
        mov bx, 2000
.c2:    call ovl
        dec bx
        jnz .c2
        dec bp
        jnz .c0
        mov ax, dx
        call hex
        ; ---- D: 400000 stores to bytes right after the loop's own code
        xor dx, dx
        mov cx, 40000
.d0:    mov bx, 10
.d1:    mov [var], cx
        add dx, [var]
        mov [var+2], dx
        dec bx
        jnz .d1
        loop .d0
var:    dw 0, 0
        mov ax, dx
        call hex
        mov ax, 4C00h
        int 21h

; INT 60h: rewrite the caller's INT 60h (2 bytes before the return address)
; into "INC DX; INC DX" and return to it.
patch60:
        push bp
        mov bp, sp
        push bx
        mov bx, [bp+2]
        sub bx, 2
        mov word [cs:bx], 4242h
        mov [bp+2], bx
        pop bx
        pop bp
        iret

ver1:   add dx, 3
        ret
ver2:   add dx, 5
        ret
verlen  equ ver2 - ver1
ovl:    times verlen db 0

; prints AX as 4 hex digits and CR LF
hex:    push ax
        push bx
        push cx
        push dx
        mov bx, .buf
        mov cx, 4
.h:     rol ax, 4
        push ax
        and al, 0Fh
        add al, '0'
        cmp al, '9'
        jbe .s
        add al, 7
.s:     mov [bx], al
        inc bx
        pop ax
        loop .h
        mov dx, .buf
        mov ah, 9
        int 21h
        pop dx
        pop cx
        pop bx
        pop ax
        ret
.buf:   db '0000', 13, 10, '$'
sites:
