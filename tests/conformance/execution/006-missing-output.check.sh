test ! -e 006-a.txt && test ! -e 006-b.txt
