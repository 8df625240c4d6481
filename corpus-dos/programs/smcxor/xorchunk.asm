; @desc: decryptor: enciphered payload deciphered in place then called, three rounds with new keys; chunked: the decryptor deciphers 16 bytes at a time; the whole payload runs after
; @tags: smc.decryptor
; @budget: 16000
%define DEC 4
%include "xorbody.inc"
