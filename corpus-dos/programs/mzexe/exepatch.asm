; @desc: MZ EXE with overlay-manager style lazy binding: three CALL FAR sites start relocated to a binder, which patches each site's offset and selector at run time and tail-jumps; three phases rebind the sites to the real segments and to alias selectors (seg-1:off+16, seg+1:off-16) for the same code, and a JMP FAR site is re-patched each phase; callees fold their CS (relative to the PSP) into the result
; @tags: dos.exe_reloc cf.far_selector_patch cf.far_call
; @format: exe
; @budget: 15000
%include "mz.inc"
MZ_BEGIN 6                      ; 96-byte header: up to 17 relocations

MZ_SEG code1, 0
%include "lib.inc"
start:
    call crc_init
    cld                         ; DF is not defined at entry
    mov ax, SEG_data
    RELOC
    mov ds, ax
    mov [psp], es
    xor edx, edx
    mov ebx, 3
    mov word [phase], 0
ph_top:
    mov cx, 40
ph_loop:
    call SEG_code1:binder       ; patched at run time by the binder
    RELOC
site0_end:
    add ebx, ecx
    call SEG_code1:binder
    RELOC
site1_end:
    test cl, 3
    jnz ph_skip
    call SEG_code1:binder
    RELOC
site2_end:
ph_skip:
    loop ph_loop
    mov eax, edx
    call crc_dword
    mov eax, ebx
    call crc_dword
    ; a JMP FAR re-patched every phase: to code3:t_jmp through an alias selector
    mov si, [phase]
    shl si, 2
    mov ax, [alias + si]        ; selector delta
    add ax, [tgt + 3 * 4 + 2]   ; code3 segment (relocated table entry)
    mov [cs:jsite + 3], ax
    mov ax, t_jmp
    sub ax, [alias + si + 2]    ; offset delta
    mov [cs:jsite + 1], ax
jsite:
    jmp 0:0
back:
    mov eax, edx
    call crc_dword
    ; rebind: every site goes back to the binder
    mov ax, cs
    mov [cs:site0_end - 2], ax
    mov [cs:site1_end - 2], ax
    mov [cs:site2_end - 2], ax
    mov word [cs:site0_end - 4], binder
    mov word [cs:site1_end - 4], binder
    mov word [cs:site2_end - 4], binder
    inc word [phase]
    cmp word [phase], 3
    jb ph_top
    mov ax, [binds]
    call crc_word
    jmp print_crc_exit

; far-called from a site; [bp+2] = return IP (just after the 5-byte CALL FAR)
binder:
    push bp
    mov bp, sp
    push ax
    push si
    push di
    inc word [binds]
    mov di, [bp + 2]
    xor si, si
.f: cmp di, [cs:site_ends + si]
    je .found
    add si, 2
    jmp .f
.found:
    add si, si                  ; site index * 4
    mov ax, [tgt + si + 2]      ; relocated segment of the target
    mov si, [phase]
    shl si, 2
    add ax, [alias + si]
    mov [cs:di - 2], ax         ; patch the selector
    mov [cs:jv + 2], ax
    ; recover the site index again for the offset
    xor si, si
.g: cmp di, [cs:site_ends + si]
    je .h
    add si, 2
    jmp .g
.h: add si, si
    mov ax, [tgt + si]
    mov si, [phase]
    shl si, 2
    sub ax, [alias + si + 2]
    mov [cs:di - 4], ax         ; patch the offset
    mov [cs:jv], ax
    pop di
    pop si
    pop ax
    pop bp
    jmp far [cs:jv]             ; the target returns straight to the site
jv: dw 0, 0
site_ends: dw site0_end, site1_end, site2_end

MZ_SEG code2, 0A0h
    times 16 db 90h             ; offsets >= 16 so that seg+1:off-16 exists
t_add:
    mov ax, cs
    sub ax, [psp]
    add dx, ax
    add edx, ebx
    retf
t_mul:
    mov ax, cs
    sub ax, [psp]
    imul edx, edx, 5
    xor dl, al
    retf

MZ_SEG code3, 0B0h
    times 16 db 90h
t_rot:
    mov ax, cs
    sub ax, [psp]
    rol edx, 3
    sub dx, ax
    retf
t_jmp:
    mov ax, cs
    sub ax, [psp]
    shl eax, 16
    xor edx, eax
    jmp SEG_code1:back
    RELOC

MZ_SEG data, 0C0h
psp: dw 0
phase: dw 0
binds: dw 0
tgt:                            ; far pointers fixed up by the loader
    dw t_add, SEG_code2
    RELOC
    dw t_rot, SEG_code3
    RELOC
    dw t_mul, SEG_code2
    RELOC
    dw t_jmp, SEG_code3
    RELOC
alias:                          ; per phase: selector delta, offset delta (off - 16*sel)
    dw 0, 0
    dw -1, -16
    dw 1, 16

MZ_SEG stk, 0C4h
    times 200h db 0
MZ_END code1, start, stk, 200h, 0, 0FFFFh
