test "$(cat x.0005.out)" = five
