test "$(cat one.txt)" = 1 && test "$(cat two.txt)" = 2
