set -e
test -f 259-out/part-3.txt
