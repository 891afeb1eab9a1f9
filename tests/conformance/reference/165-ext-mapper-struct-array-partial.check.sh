set -e
test "$(cat 165-0l.out)" = "slot 0"
test "$(cat 165-1r.out)" = "slot 1"
