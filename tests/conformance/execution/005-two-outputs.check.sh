test "$(cat results/005-b.txt)" = "zz"
