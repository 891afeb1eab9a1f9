diff s.fv 005-read-write-fv.fv.expected
