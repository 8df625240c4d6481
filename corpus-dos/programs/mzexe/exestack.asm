; @desc: MZ EXE whose stack segment and 4 KiB BSS lie beyond the file image: header SS:SP, min alloc (BSS + stack) and max alloc (min + 40h) that the loader must honour; checks the entry SS/SP, the PSP memory-top word and the program MCB (size = 10h + image + max alloc), resizes (4Ah) and allocates/frees (48h/49h) a block, recurses 150 deep on the loader-made stack (CRC of the frames above SP at the deepest level) and fills the BSS
; @tags: dos.exe_reloc dos.exe_alloc mem.dos_alloc
; @format: exe
; @budget: 57000
%include "mz.inc"
MZ_BEGIN 2                      ; 32-byte header: room for one relocation

MZ_SEG code1, 0
start:
    mov [cs:e_sp], sp           ; before anything touches the stack
    mov [cs:e_ss], ss
    mov [cs:psp], es
    jmp main
e_sp: dw 0
e_ss: dw 0
psp: dw 0
%include "lib.inc"
main:
    call crc_init
    cld                         ; DF is not defined at entry
    mov ax, [cs:e_ss]
    sub ax, [cs:psp]
    call crc_word               ; 10h + SEG_stk
    mov ax, [cs:e_sp]
    call crc_word
    mov ax, SEG_bss             ; the one relocation
    RELOC
    sub ax, [cs:psp]
    call crc_word               ; 10h + SEG_bss
    mov ds, [cs:psp]
    mov ax, [2]                 ; PSP: segment past the allocation
    sub ax, [cs:psp]
    call crc_word
    mov ax, [cs:psp]
    dec ax
    mov ds, ax                  ; the program's MCB
    mov al, [0]
    call crc_byte
    mov ax, [1]
    sub ax, [cs:psp]
    call crc_word               ; owner = PSP
    mov ax, [3]
    call crc_word               ; size in paragraphs
    ; shrink to exactly PSP + image + min alloc
    mov es, [cs:psp]
    mov bx, 10h + IMGP + MINA
    mov ah, 4Ah
    int 21h
    setc al
    call crc_byte
    mov ax, [3]
    call crc_word
    ; allocate and free a small block: CF, its MCB owner and size
    mov bx, 20h
    mov ah, 48h
    int 21h
    mov dx, ax
    setc al
    call crc_byte
    jc .noalloc
    mov es, dx
    dec dx
    mov ds, dx
    mov ax, [1]
    sub ax, [cs:psp]
    call crc_word
    mov ax, [3]
    call crc_word
    mov ah, 49h
    int 21h
    setc al
    call crc_byte
.noalloc:
    ; deep recursion on the loader's stack; the stack bytes are read back via ES
    mov ax, 150
    call rec
    call crc_word
    mov ax, sp
    call crc_word
    ; fill the BSS and read it back
    mov ax, [cs:e_ss]
    sub ax, SEG_stk - SEG_bss
    mov es, ax
    mov ds, ax
    xor di, di
    mov cx, 2048
    mov ax, 1357h
.f: stosw
    add ax, 0F00Dh
    rol ax, 3
    loop .f
    xor si, si
    mov cx, 4096
    call crc_buf
    jmp print_crc_exit

rec:                            ; ax = n; returns ax = f(n); 8 bytes of stack per level
    push bp
    mov bp, sp
    push ax
    push ax
    test ax, ax
    jz .z
    dec ax
    call rec
    imul ax, ax, 3
    add ax, [bp - 2]
    xor ax, [bp - 4]
    ror ax, 1
    jmp .o
.z: mov si, sp                  ; deepest level: 64 bytes of frames above SP
    push ds                     ; (below SP only interrupts write: never read)
    push ss
    pop ds
    mov cx, 64
    call crc_buf
    pop ds
    mov ax, 1
.o: mov sp, bp
    pop bp
    ret

MZ_SEG data, 80h
    db 'exestack data segment', 0
; The image ends exactly at paragraph 9Eh: with the 32-byte header the file is
; 5 * 512 bytes (e_cblp = 0), so a loader that sizes the block from whole pages
; (DOSBox 0.74 ignores e_cblp there) and one that uses e_cblp agree.
MZ_SEG imgend, 9Eh
IMGP equ 9Eh
MZ_BSS bss, 9Eh                 ; 4 KiB BSS
MZ_BSS stk, 19Eh                ; 2 KiB stack
MINA equ 19Eh + 80h - IMGP
MZ_END code1, start, stk, 800h, MINA, MINA + 40h
