test "$(cat 163-named.out)" = 163-named.out
