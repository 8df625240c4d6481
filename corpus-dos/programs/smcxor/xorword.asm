; @desc: decryptor: enciphered payload deciphered in place then called, three rounds with new keys; word XOR with a rolling (ROL/ADD) key
; @tags: smc.decryptor
; @budget: 15000
%define DEC 2
%include "xorbody.inc"
