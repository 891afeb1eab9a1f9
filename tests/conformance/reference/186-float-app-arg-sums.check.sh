grep -x 135.3 186-b.txt
