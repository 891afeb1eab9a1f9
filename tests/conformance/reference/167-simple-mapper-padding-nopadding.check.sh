set -e
test -f 167-pad.000000000.out
test -f 167-nopad.75943.out
