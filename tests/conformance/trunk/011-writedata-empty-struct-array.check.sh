[ -f ints.out ] && [ ! -s ints.out ]
