; @desc: REP string instructions with segment-override prefixes whose SI/DI wrap at 64 KiB: FS:/GS:/ES: sources for MOVSB/MOVSW/MOVSD forward and backward, `rep fs lodsb` (prefix order swapped), GS: REPE CMPSB mismatching after the wrap, FS: prefixes that must NOT move the ES:DI of SCASB/STOSW, overlapping source and destination one paragraph apart (ES = FS+1) where byte order shows (no word or dword access at offset FFFFh, which faults on a 386); CRC of registers, all six CMPS flags and both ends of every segment
; @tags: mem.wrap64k mem.rep_string mem.rep_df1 mem.seg_override mem.fs_gs mem.rep_seg_wrap
; @budget: 83000
org 100h
%include "lib.inc"
%macro FEED 0                   ; SI DI CX AX and all six defined flags of the last op
    pushf
    push ax
    mov ax, si
    call crc_word
    mov ax, di
    call crc_word
    mov ax, cx
    call crc_word
    pop ax
    call crc_word
    pop ax
    and ax, 08D5h
    call crc_word
%endmacro
start:
    call crc_init
    cld
    mov ax, cs
    add ax, 1000h
    mov [segs + 0], ax          ; E
    add ax, 1000h
    mov [segs + 2], ax          ; F
    add ax, 1000h
    mov [segs + 4], ax          ; G
    ; both 512-byte ends of each segment: byte = (off * 29 + k * 85) ^ (off >> 8)
    xor bp, bp
.seg:
    mov es, [segs + bp]
    xor di, di
.b: mov ax, di
    imul ax, ax, 29
    mov dx, bp
    imul dx, dx, 43
    add al, dl
    mov dx, di
    xor al, dh
    stosb
    cmp di, 512
    jne .b2
    mov di, 0FE00h
.b2:
    test di, di
    jnz .b
    add bp, 2
    cmp bp, 6
    jb .seg
    mov es, [segs + 0]
    mov fs, [segs + 2]
    mov gs, [segs + 4]

    ; 1. FS: REP MOVSB forward, SI wraps
    mov si, 0FFF0h
    mov di, 0100h
    mov cx, 40
    fs rep movsb
    FEED
    ; 2. GS: REP MOVSW backward, SI and DI both wrap (at different elements)
    std
    mov si, 0006h
    mov di, 0010h
    mov cx, 20
    gs rep movsw
    cld
    FEED
    ; 3. ES: REP MOVSD inside ES, the source wraps
    mov si, 0FFF8h
    mov di, 0020h
    mov cx, 8
    es rep movsd
    FEED
    ; 4. REP FS: LODSB (prefix order F3 64)
    mov si, 0FFFAh
    mov cx, 10
    rep fs lodsb
    FEED
    ; 5. GS: REPE CMPSB: equal across the wrap of SI, then a mismatch
    mov si, 0FFFCh
    mov di, 0180h
    mov cx, 12
    mov dword [gs:0FFFCh], 0C3B2A190h
    mov dword [es:0180h], 0C3B2A190h
    mov dword [gs:0], 0F7E6D5C4h
    mov dword [es:0184h], 0F7E6D5C4h
    mov byte [gs:4], 11h
    mov byte [es:0188h], 22h
    gs repe cmpsb
    FEED
    ; 6. FS: REPNE SCASB (the prefix is ignored: ES:DI is scanned), DI wraps
    mov di, 0FFF0h
    mov al, [es:0005h]
    mov cx, 100
    fs repne scasb
    FEED
    ; 7. FS: REP STOSW backward from 0004h: writes ES, wraps to FFFEh
    std
    mov di, 0004h
    mov ax, 0BEEFh
    mov cx, 6
    fs rep stosw
    cld
    FEED
    ; 8. DS = GS, REP MOVSB from FFFFh (byte elements may sit at FFFFh), both wrap
    push ds
    push gs
    pop ds
    mov si, 0FFFFh
    mov di, 0FFFDh
    mov cx, 9
    rep movsb
    pop ds
    FEED
    ; 9. overlap one paragraph apart: ES = FS+1, destination 8 bytes ahead (byte order
    ;    propagates the pattern), source wraps after 16 bytes, destination after 24
    push es
    mov ax, fs
    inc ax
    mov es, ax
    xor ax, ax                  ; (no absolute segment in AX or the flags)
    mov si, 0FFF0h
    mov di, 0FFE8h
    mov cx, 48
    fs rep movsb
    FEED
    ; 10. the same with words and a one-byte overlap, backward; DI is odd, so it stops
    ;     at 0001h: a word at offset FFFFh would cross the segment limit (#GP on a
    ;     386 in real mode; DOSBox and QEMU read on past it)
    std
    mov si, 0030h
    mov di, 0021h               ; ES:0021 = FS:0031: one byte above the source word
    mov cx, 17                  ; DI 0021h .. 0001h
    fs rep movsw
    cld
    pop es
    FEED
    ; CRC both ends of the three segments
    xor bp, bp
.crc:
    mov ds, [cs:segs + bp]
    xor si, si
    mov cx, 512
    call crc_buf
    mov si, 0FE00h
    mov cx, 512
    call crc_buf
    add bp, 2
    cmp bp, 6
    jb .crc
    jmp print_crc_exit
segs: dw 0, 0, 0
