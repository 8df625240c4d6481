; @output: CORPDATA.BIN
; data file read by readfile.com (assembled from this source)
%assign i 0
%rep 3000
    db (i * 91 + (i >> 3)) & 0FFh
%assign i i+1
%endrep
