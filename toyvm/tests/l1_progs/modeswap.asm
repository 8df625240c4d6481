; modeswap.asm: code of one mode patched from the other (DOS .COM,
; tests/uop_only.rs `modeswap_stores_across_modes_are_seen`). The µop arms
; run real-mode code themselves and hand protected-mode code to an L1
; engine of their own; each engine watches only its own code bytes, so a
; store from one mode into the other mode's code must still reach the
; engine that compiled it.
;
; N rounds, interrupts off throughout. Each round:
;   real mode:  calls R (`add bx, imm`), then stores the round counter into
;               P's immediate (P is protected-mode code: the store comes
;               from a µop program, through E1's page view);
;   protected:  (flat 32-bit) calls P (`add edx, imm`) three times, then
;               stores 3 * (counter) into R's immediate (a store L1 makes).
; R starts as `add bx, 1`; P and R sit in 16-byte granules of their own, so
; no store into them passes through another engine's code granule.
;
; Expected (N = 30): BX = 1 + sum(3t, t = 2..30) = 1393,
; EDX = 3 * sum(1..30) = 1395. Results at physical 500h (BX) and 504h
; (EDX); then the program spins with interrupts off.
; nasm -f bin -o modeswap.bin modeswap.asm

bits 16
org 100h

N       equ 30
RESULTS equ 500h

start:
        cli
        xor eax, eax
        mov ax, cs
        shl eax, 4
        mov [cs_lin], eax
        add [gdtr + 2], eax
        mov [gdt + 18h + 2], ax ; 18h: 16-bit code, base cs_lin
        mov [gdt + 20h + 2], ax ; 20h: 16-bit data, base cs_lin
        shr eax, 16
        mov [gdt + 18h + 4], al
        mov [gdt + 18h + 7], ah
        mov [gdt + 20h + 4], al
        mov [gdt + 20h + 7], ah
        mov eax, [cs_lin]
        add [pm_jump], eax      ; offset made linear (code 08h: base 0)
        mov [rm_seg], cs
        lgdt [gdtr]
        xor bx, bx
        xor edx, edx
        xor esi, esi
        mov si, N
.round:
        call rcode
        mov ax, si
        mov [pimm], al          ; real mode patches protected-mode code
        call to_pm
        dec si
        jnz .round
        push 0
        pop es
        mov [es:RESULTS], bx
        mov [es:RESULTS + 4], edx
.spin:  jmp .spin

; Enters protected mode, runs P three times, patches R, comes back.
to_pm:
        mov eax, cr0
        or al, 1
        mov cr0, eax
        jmp dword 08h:pm32
pm_jump equ $ - 6

        align 16
rcode:  add bx, byte 1
        ret
rimm    equ rcode + 2
        align 16

bits 32
pm32:
        mov ax, 10h
        mov ds, ax
        mov es, ax
        mov fs, ax
        mov gs, ax
        mov ax, 20h             ; the same stack, base cs_lin, SP
        mov ss, ax
        mov ax, 20h
        mov fs, ax
        mov ebp, [fs:cs_lin]
        mov ax, 10h
        mov fs, ax
        mov ecx, 3
.p:     call pcode
        loop .p
        lea eax, [esi * 3]
        mov [ds:ebp + rimm], al ; protected mode patches real-mode code
        jmp dword 18h:pm16

        align 16
pcode:  add edx, byte 1
        ret
pimm    equ pcode + 2
        align 16

bits 16
pm16:
        mov ax, 20h             ; 64 KiB limits, as real mode wants them
        mov ds, ax
        mov es, ax
        mov fs, ax
        mov gs, ax
        mov ss, ax
        mov eax, cr0
        and al, 0FEh
        mov cr0, eax
        jmp 0:rm_back
rm_seg  equ $ - 2
rm_back:
        mov ax, cs
        mov ds, ax
        mov es, ax
        mov fs, ax
        mov gs, ax
        mov ss, ax
        ret

        align 8
gdt:    dq 0
        dw 0FFFFh, 0            ; 08h: flat 32-bit code
        db 0, 9Ah, 0CFh, 0
        dw 0FFFFh, 0            ; 10h: flat 32-bit data
        db 0, 92h, 0CFh, 0
        dw 0FFFFh, 0            ; 18h: 16-bit code, base cs_lin
        db 0, 9Ah, 0, 0
        dw 0FFFFh, 0            ; 20h: 16-bit data, base cs_lin
        db 0, 92h, 0, 0
gdt_end:
gdtr:   dw gdt_end - gdt - 1
        dd gdt
cs_lin: dd 0
