test -f 185-err.txt
