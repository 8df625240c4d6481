; a20alias.asm: code that reads other bytes after an A20 move (DOS .COM,
; tests/l1_pmode.rs `a20_moves_switch_code_aliases_as_l0`). Each part calls
; one address N times with the gate open and N times with it closed: open,
; it runs code A (bit 20 set: the HMA, the first odd megabyte); closed, the
; alias in conventional memory, code B. Halfway through, each code is
; patched through that same address (A with the gate open, B with it
; closed), so a store through an alias must retire exactly the right
; block. Results (AX BX CX DX per part) land at physical 500h; then the
; program spins with interrupts off.
;
;   part 1: real mode, FFFF:off (HMA), the gate moved through the 8042.
;   part 2: protected mode, flat 32-bit, no paging, linear 100000h + Y;
;           the gate moved through port 92h.
;   part 3: part 2 with paging on (identity map: the page's translation has
;           bit 20 set), plus code C at linear 300FF0h whose fetch window
;           runs into linear 301000h, mapped to physical 1A0000h: with the
;           gate closed that is the VGA window at A0000h (mode 13h), so L0's
;           fetch loads the VGA latches there.
;
; Expected per part: AX=N, BX=3*N/2+4*N/2, CX=N, DX=5*N/2+7*N/2; part 3
; also ESI=2*N*13. nasm -f bin -o a20alias.bin a20alias.asm

bits 16
org 100h

N       equ 40
RESULTS equ 500h

start:
        mov ax, 0013h           ; mode 13h: A0000h is the VGA window
        int 10h
        push es                 ; plane bytes 5Ah under A000:0000-003F,
        mov ax, 0A000h          ; then a read that loads zero latches
        mov es, ax
        xor di, di
        mov cx, 40h
        mov al, 5Ah
        cld
        rep stosb
        mov al, [es:0100h]
        pop es

        xor eax, eax
        mov ax, cs
        shl eax, 4
        mov [cs_lin], eax
        mov [cs_seg], cs

        ; ---- part 1: real mode, the HMA ----
        cli
        mov al, 0
        out 92h, al             ; fast A20 off
        call kbc_off
        sti
        mov ebx, [cs_lin]
        add ebx, code_b1 + 10h  ; FFFF:off aliases lin(code_b1) when closed
        cmp ebx, 0FFF0h
        jbe .fits
        jmp $                   ; loaded too high for this test
.fits:
        mov [hma_off], bx
        mov [far1], bx
        mov word [far1 + 2], 0FFFFh
        call kbc_on
        push es
        mov ax, 0FFFFh
        mov es, ax
        mov di, [hma_off]
        mov si, code_a1
        mov cx, code_a1_end - code_a1
        rep movsb
        pop es
        xor ax, ax
        xor bx, bx
        xor cx, cx
        xor dx, dx
        mov bp, N
.loop1:
        cmp bp, N / 2
        jne .nopatch1
        push ax
        push es
        mov ax, 0FFFFh
        mov es, ax
        mov di, [hma_off]
        call kbc_on
        mov byte [es:di + 5], 4 ; code A: add bx,4 (physical 1xxxxxh)
        call kbc_off
        mov byte [es:di + 5], 7 ; code B: add dx,7 (through the alias)
        pop es
        pop ax
.nopatch1:
        call kbc_on
        call far [far1]
        call kbc_off
        call far [far1]
        dec bp
        jnz .loop1
        mov [res + 0], ax
        mov [res + 2], bx
        mov [res + 4], cx
        mov [res + 6], dx

        ; ---- protected mode set-up ----
        cli
        mov eax, [cs_lin]
        add [gdtr + 2], eax
        mov [gdt + 18h + 2], ax ; 18h: 16-bit data, base cs_lin
        shr eax, 16
        mov [gdt + 18h + 4], al
        mov [gdt + 18h + 7], ah
        mov eax, [cs_lin]
        add [pm_jump], eax
        lgdt [gdtr]
        mov eax, cr0
        or al, 1
        mov cr0, eax
        jmp dword 08h:pm32      ; offset made linear above
pm_jump equ $ - 6

bits 32
pm32:
        mov ax, 10h
        mov ds, ax
        mov es, ax
        mov ss, ax
        ; ebp = cs_lin, read through 18h (base cs_lin)
        mov ax, 18h
        mov fs, ax
        mov ebp, [fs:cs_lin]
        lea esp, [ebp + 0FFF0h]

        ; ---- part 2: flat, no paging, the first odd megabyte ----
        lea edi, [ebp + code_b2 + 100000h]
        mov [ebp + target2], edi
        call a20_on
        lea esi, [ebp + code_a2]
        mov ecx, code_a2_end - code_a2
        rep movsb
        call part23
        mov [ebp + res + 8], eax
        mov [ebp + res + 12], ebx
        mov [ebp + res + 16], ecx
        mov [ebp + res + 20], edx

        ; ---- part 3: paging on, identity map of 4 MiB, plus code C ----
        lea edi, [ebp + 4000h + 0FFFh]
        and edi, 0FFFFF000h     ; page directory
        mov [ebp + pd], edi
        lea eax, [edi + 1000h + 3]
        mov [edi], eax          ; PDE 0: the table at pd + 1000h
        lea edi, [edi + 1000h]
        xor ecx, ecx
.pt:    mov eax, ecx
        shl eax, 12
        or eax, 3
        mov [edi + ecx * 4], eax
        inc ecx
        cmp ecx, 1024
        jb .pt
        ; linear 300000h -> page C (pd + 2000h), 301000h -> 1A0000h
        mov eax, [ebp + pd]
        add eax, 2000h + 3
        mov [edi + 300h * 4], eax
        mov dword [edi + 301h * 4], 1A0000h + 3
        ; code C at the end of page C: 13 x inc esi, ret
        mov edi, [ebp + pd]
        add edi, 2000h + 0FF0h
        mov ecx, 13
        mov al, 46h
        rep stosb
        mov byte [edi], 0C3h
        ; code A back to add bx,3, code B back to add dx,5
        call a20_on
        mov edi, [ebp + target2]
        mov byte [edi + 5], 3
        call a20_off
        mov byte [edi + 5], 5
        mov eax, [ebp + pd]
        mov cr3, eax
        mov eax, cr0
        or eax, 80000000h
        mov cr0, eax
        jmp .paged
.paged:
        xor esi, esi
        mov byte [ebp + with_c], 1
        call part23
        mov [ebp + res + 24], eax
        mov [ebp + res + 28], ebx
        mov [ebp + res + 32], ecx
        mov [ebp + res + 36], edx
        mov [ebp + res + 40], esi

        ; results to physical 500h
        lea esi, [ebp + res]
        mov edi, RESULTS
        mov ecx, 44
        rep movsb
        call a20_off
        jmp $

; The loop of parts 2 and 3: N times code A (gate open) and code B (gate
; closed) at [target2], patched halfway; with `with_c`, code C after each.
part23:
        xor eax, eax
        xor ebx, ebx
        xor ecx, ecx
        xor edx, edx
        mov edi, N
.loop:
        cmp edi, N / 2
        jne .nopatch
        push edi
        mov edi, [ebp + target2]
        call a20_on
        mov byte [edi + 5], 4
        call a20_off
        mov byte [edi + 5], 7
        pop edi
.nopatch:
        call a20_on
        call [ebp + target2]
        call code_c
        call a20_off
        call [ebp + target2]
        call code_c
        dec edi
        jnz .loop
        ret

code_c:
        cmp byte [ebp + with_c], 0
        je .no
        push eax
        mov eax, 300FF0h
        call eax
        pop eax
.no:    ret

a20_on:
        push eax
        in al, 92h
        or al, 2
        out 92h, al
        pop eax
        ret

a20_off:
        push eax
        in al, 92h
        and al, 0FDh
        out 92h, al
        pop eax
        ret

code_a2:                        ; copied to 100000h + lin(code_b2)
        add eax, 1
        add ebx, 3
        ret
code_a2_end:

code_b2:
        add ecx, 1
        add edx, 5
        ret

bits 16
kbc_wait:
        in al, 64h
        test al, 2
        jnz kbc_wait
        ret

kbc_out:                        ; 8042 output port <- AH
        push ax
        call kbc_wait
        mov al, 0D1h
        out 64h, al
        call kbc_wait
        mov al, ah
        out 60h, al
        pop ax
        ret

kbc_on:
        push ax
        mov ah, 0DFh
        call kbc_out
        pop ax
        ret

kbc_off:
        push ax
        mov ah, 0DDh
        call kbc_out
        pop ax
        ret

code_a1:                        ; copied to FFFF:off
        add ax, 1
        add bx, 3
        retf
code_a1_end:

code_b1:
        add cx, 1
        add dx, 5
        retf

align 8
gdt:    dq 0
        dq 00CF9A000000FFFFh    ; 08h: code, flat, 32-bit
        dq 00CF92000000FFFFh    ; 10h: data, flat
        dq 000092000000FFFFh    ; 18h: data, base cs_lin, 64 KiB
gdtr:   dw 4 * 8 - 1
        dd gdt                  ; made linear above

cs_lin:  dd 0
cs_seg:  dw 0
hma_off: dw 0
far1:    dd 0
target2: dd 0
pd:      dd 0
with_c:  db 0
res:     times 11 dd 0
