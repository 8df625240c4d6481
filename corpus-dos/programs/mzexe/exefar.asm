; @desc: MZ EXE, 512-byte header, 3 code + 2 data segments and an in-image stack segment: relocated MOV r16,seg / CALL FAR ptr16:16 / PUSH imm16 seg then RETF, a far pointer table fixed up by the loader driving CALL FAR [mem], RETF/RETF n across segments, LES through a relocated far data pointer; CRC of results and segment distances from the PSP
; @tags: dos.exe_reloc cf.far_call
; @format: exe
; @budget: 17000
%include "mz.inc"
MZ_BEGIN 32                     ; 512-byte header, like classic linkers

MZ_SEG code1, 0
%include "lib.inc"
start:
    mov [cs:psp], es            ; DS = ES = PSP at entry
    call crc_init
    cld                         ; DF is not defined at entry
    mov ax, SEG_data
    RELOC
    mov ds, ax
    mov ax, ds                  ; segment distances from the PSP (PSP + 10h + relative)
    sub ax, [cs:psp]
    call crc_word
    mov ax, cs
    sub ax, [cs:psp]
    call crc_word
    mov ax, ss
    sub ax, [cs:psp]
    call crc_word
    mov ax, sp
    call crc_word
    mov si, segtab              ; relocated segment words in the data segment
    mov cx, NSEGS
.s: lodsw
    sub ax, [cs:psp]
    call crc_word
    loop .s
    mov edx, 12345678h
    mov ebx, 1
    xor cx, cx
.loop:
    mov si, cx
    and si, 3
    shl si, 2
    call far [fartab + si]      ; loader-fixed far pointers
    push cx
    push word 7
    call SEG_code3:f_sum        ; direct far call, RETF 4
    RELOC
    add bx, ax
    push cs                     ; PUSH seg (relocated imm16) / PUSH off / RETF far call
    push word .back
    push strict word SEG_code2
    RELOC
    push word f_add
    retf
.back:
    les di, [dptr]              ; far data pointer fixed up by the loader
    mov bx, cx
    and bx, 31
    add bx, bx
    add dx, [es:di + bx]
    mov bx, [es:di + bx]        ; ebx keeps its upper half

    inc cx
    cmp cx, 100
    jb .loop
    mov eax, edx
    call crc_dword
    mov eax, ebx
    call crc_dword
    mov ax, es
    mov bx, ds
    sub ax, bx
    call crc_word               ; SEG_data2 - SEG_data
    jmp print_crc_exit
helper:                         ; called far from code3
    xor edx, 5A5A1234h
    retf
psp: dw 0

MZ_SEG code2, 90h
f_add:
    add edx, ebx
    inc ebx
    retf
f_mix:
    imul edx, edx, 9
    xor dx, [w1]
    add word [w1], 3
    retf

MZ_SEG code3, 0A0h
f_rot:
    rol edx, 7
    add ebx, edx
    retf
f_chain:
    call SEG_code2:f_add
    RELOC
    call SEG_code1:helper
    RELOC
    retf
f_sum:
    push bp
    mov bp, sp
    mov ax, [bp + 6]
    imul ax, [bp + 8]
    pop bp
    retf 4

MZ_SEG data, 0B0h
w1: dw 0BEEFh
fartab:
    dw f_add, SEG_code2
    RELOC
    dw f_rot, SEG_code3
    RELOC
    dw f_mix, SEG_code2
    RELOC
    dw f_chain, SEG_code3
    RELOC
dptr: dw tbl2, SEG_data2
    RELOC
segtab:
    dw SEG_code1
    RELOC
    dw SEG_code2
    RELOC
    dw SEG_code3
    RELOC
    dw SEG_data2
    RELOC
    dw SEG_stk
    RELOC
NSEGS equ 5

MZ_SEG data2, 0B2h
    dw 0, 0, 0
tbl2:
%assign i 0
%rep 32
    dw (i * 2654435761) >> 16 & 0FFFFh
 %assign i i+1
%endrep

MZ_SEG stk, 0B8h
    times 400h db 0
MZ_END code1, start, stk, 400h, 0, 0FFFFh
