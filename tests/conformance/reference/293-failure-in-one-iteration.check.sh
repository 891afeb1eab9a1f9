set -e
test -f 293-o0001.txt
test -f 293-o0003.txt
test ! -e 293-o0002.txt
