test "$(cat seqout.aa)" = a && test "$(cat seqout.ab)" = b && test "$(cat seqout.ac)" = c
