set -e
test -f 262-alpha-0000.dat
test -f 262-alpha-0001.dat
