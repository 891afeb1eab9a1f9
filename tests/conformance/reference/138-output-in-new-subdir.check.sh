test "$(cat 138-outdir/deeper/hello.txt)" = hi
