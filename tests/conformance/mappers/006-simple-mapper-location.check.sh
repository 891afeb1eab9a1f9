test "$(cat outdir/a0003.dat)" = three
