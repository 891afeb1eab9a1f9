test "$(cat quxleft.txt)" = hello && test "$(cat quxright.txt)" = goodbye
