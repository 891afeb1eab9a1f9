set -e
test "$(cat 139-results/r0001.dat)" = 10
test "$(cat 139-results/r0003.dat)" = 30
