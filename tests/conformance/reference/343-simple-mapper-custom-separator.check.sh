test -f 343-g03-07.out
