set -e
test "$(cat 174-one.txt)" = hello
test "$(cat 174-two.txt)" = hello
