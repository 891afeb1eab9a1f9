set -e
test -f 341-ps.0002_right.txt
test -f 341-n.p_left.txt
