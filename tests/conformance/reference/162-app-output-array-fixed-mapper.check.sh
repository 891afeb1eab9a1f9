set -e
test "$(cat 162-seqout.aa)" = one
test "$(cat 162-seqout.ac)" = three
