test "$(tail -1 131-two.txt)" = 3
