set -e
grep -x hello 113-one.txt
test $(wc -l < 113-two.txt) = 3
grep -x "hello: 32" 113-three.txt
