; vgacode.asm: real-mode code run out of the VGA window and patched there
; (DOS .COM, tests/uop_only.rs `vga_window_code_runs_in_l1_slices`). The µop
; arms run such code in slices on their own L1 engine (device blocks, which
; read the window through the VGA's peek); real-mode code outside the
; window, run by µop programs, patches the routine's immediate through the
; window between calls. Mode 13h: the window reads back what was stored.
;
; The window routine also stores BL into the immediate of `ramcode`, a
; routine in ordinary RAM the µop programs run next: a store L1 makes in a
; slice into the driver's code (the driver learns of it from the
; machine's code-write log).
;
; Expected (N = 40): BX = 1 + sum(b & 7, b = 2..40) = 140 at physical
; 500h; DI = the sum of (BX & 0FFh) after each call at 502h; exit code 0.
; nasm -f bin -o vgacode.bin vgacode.asm

bits 16
org 100h

N       equ 40

start:
        mov ax, 0013h
        int 10h
        mov ax, 0A000h
        mov es, ax
        mov si, routine
        mov di, 1000h
        mov cx, routine_end - routine
        cld
        rep movsb
        xor bx, bx
        xor di, di
        mov bp, N
.loop:
        call far [vfar]
        mov cx, 300             ; work between calls, so a slice ends
.work:  add dx, cx              ; in this code and the patch and the next
        dec cx                  ; call run on the driver
        jnz .work
        mov ax, bp
        and al, 7
        mov [es:1000h + 2], al  ; the routine's immediate, in the window
        call ramcode            ; patched by the window routine (run by
                                ; the driver: slices end in the work loop)
        dec bp
        jnz .loop
        push 0
        pop es
        mov [es:500h], bx
        mov [es:502h], di
        mov ax, 4C00h
        int 21h

routine:
        add bx, byte 1
        mov [ramimm], bl        ; window code patches RAM code (DS = PSP)
        retf
routine_end:

vfar:   dw 1000h, 0A000h

        align 16
ramcode:
        add di, byte 0
        ret
ramimm  equ ramcode + 2
