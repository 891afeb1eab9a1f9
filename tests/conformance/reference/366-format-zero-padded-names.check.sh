set -e
test -f 366-frame-0007.txt
test -f 366-frame-0008.txt
