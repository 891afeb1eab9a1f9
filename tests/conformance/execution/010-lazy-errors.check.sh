test ! -e 010-bad.txt && test ! -e 010-after.txt
