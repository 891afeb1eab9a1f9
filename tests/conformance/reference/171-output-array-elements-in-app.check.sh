set -e
test -f 171-a.txt
test -f 171-b.txt
