; Self-decrypting code, twice over the same bytes: the payload is XOR-ed
; with a key, run, re-encrypted, then decrypted with the second payload's
; key and run again, so compiled code is overwritten by a guest loop.
        org 100h
        mov si, 3
again:  mov bx, payload
        mov cx, plen
        mov al, [key]
dec1:   xor [bx], al
        inc bx
        loop dec1
        call payload
        ; re-encrypt and switch to the second payload's image
        mov bx, payload
        mov di, image2
        mov cx, plen
swap:   mov al, [di]
        mov [bx], al
        inc bx
        inc di
        loop swap
        mov byte [key], 5Ah
        dec si
        jnz again
        int 20h
key:    db 0A5h
payload:
        db 0B8h ^ 0A5h, 11h ^ 0A5h, 11h ^ 0A5h    ; mov ax, 1111h
        db 01h ^ 0A5h, 0C2h ^ 0A5h                ; add dx, ax
        db 0C3h ^ 0A5h                            ; ret
plen    equ $ - payload
image2: db 0B8h ^ 5Ah, 22h ^ 5Ah, 02h ^ 5Ah       ; mov ax, 0222h
        db 01h ^ 5Ah, 0C2h ^ 5Ah                  ; add dx, ax
        db 0C3h ^ 5Ah                             ; ret
