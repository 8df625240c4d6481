; @desc: decryptor: enciphered payload deciphered in place then called, three rounds with new keys; dword XOR with 32-bit addressing and a 9E3779B9h key schedule
; @tags: smc.decryptor
; @budget: 15000
%define DEC 3
%include "xorbody.inc"
