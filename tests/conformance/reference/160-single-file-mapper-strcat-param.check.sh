test "$(cat 160-base.in.out)" = 160-base.in
