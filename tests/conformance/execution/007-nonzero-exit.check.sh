test ! -e 007-nonzero-exit.out
