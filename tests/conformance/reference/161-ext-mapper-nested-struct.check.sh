set -e
test "$(cat 161-a.out)" = 1st
test "$(cat 161-cl.out)" = 3l
test "$(cat 161-cr.out)" = 3r
