for i in 0 1 2 3 4; do test "$(cat o000$i.txt)" = n$i || exit 1; done
