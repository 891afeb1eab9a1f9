set -e
test "$(cat 173-slice.0002.out)" = z
