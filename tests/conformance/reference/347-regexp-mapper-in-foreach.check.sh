set -e
test "$(cat 347-a.res)" = AA
test "$(cat 347-b.res)" = BB
