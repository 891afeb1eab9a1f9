test "$(ls nums | wc -l)" -eq 20
test "$(cat nums/* | sort -n | tr '\n' ' ')" = "$(seq 1 20 | tr '\n' ' ')"
