test "$(cat deep/er/026.txt)" = d
