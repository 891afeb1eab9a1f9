set -e
test "$(cat 346-a.up)" = AA
test "$(cat 346-b.up)" = BB
