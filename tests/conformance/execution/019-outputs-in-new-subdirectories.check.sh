set -e
test "$(cat 019-out/a/b/o.txt)" = deep
test "$(cat 019-out/c/e.txt)" = "err deep"
