test -f 164-nosuffix_nodot.out
