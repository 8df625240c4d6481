; @desc: PIT channel 0 latch-command reads (OUT 43h,0 then two IN 40h) polled until the counter has wrapped 18 times (about one second); monotonic-decrease check between wraps
; @tags: wait.pit_latch
; @timing: dependent
; @budget: 2400000
org 100h
%include "lib.inc"
start:
    call rd
    mov bx, ax
    xor cx, cx                  ; wraps
.l: call rd
    cmp ax, bx
    jbe .same
    inc cx                      ; counter reloaded (went up)
.same:
    mov bx, ax
    cmp cx, 18
    jb .l
    PRINT 'PIT WRAPS 18'
    EXIT 0
rd: mov al, 0
    out 43h, al
    in al, 40h
    mov ah, al
    in al, 40h
    xchg al, ah
    ret
