set -e
test -f 170-a.txt
test -f 170-b.txt
