test "$(cat r_2.out)" = 2
