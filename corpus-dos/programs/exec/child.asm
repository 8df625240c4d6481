; @desc: EXEC child: prints a checksum of its command tail and exits with return code 42 (run by parent.com)
; @tags: dos.exec
; @args: hello child
; @exit: 42
; @budget: 23000
org 100h
%include "lib.inc"
start:
    call crc_init
    mov si, 81h
    movzx cx, byte [80h]
    call crc_buf
    mov dword [crcval], 0FFFFFFFFh ^ 0   ; keep tail-independent line below
    call crc_init
    PRINTN 'CHILD '
    movzx cx, byte [80h]
    mov si, 81h
    call crc_buf
    mov eax, [crcval]
    not eax
    call print_hex32
    PRINT ''
    mov ax, 4C2Ah
    int 21h
