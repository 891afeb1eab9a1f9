test "$(cat 194-test.err)" = oops
