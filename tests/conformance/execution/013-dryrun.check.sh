test ! -e 013-dry.txt
