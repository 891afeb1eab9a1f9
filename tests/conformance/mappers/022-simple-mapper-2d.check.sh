test -f m0001_0002.txt
