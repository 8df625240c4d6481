; @desc: decryptor: enciphered payload deciphered in place then called, three rounds with new keys; byte XOR stream with LODSB/STOSB
; @tags: smc.decryptor
; @budget: 16000
%define DEC 1
%include "xorbody.inc"
