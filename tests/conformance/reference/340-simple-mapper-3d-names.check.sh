set -e
test -f 340-c.0001.0002_0003.dat
test -f 340-s.0004_0005.dat
