set -e
test -f 172-a.txt
test -f 172-b.txt
