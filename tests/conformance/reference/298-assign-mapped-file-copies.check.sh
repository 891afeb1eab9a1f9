test -f 298-a.txt
