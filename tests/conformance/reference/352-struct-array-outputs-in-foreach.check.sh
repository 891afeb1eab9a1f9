set -e
test "$(cat 352-r0001_data.txt)" = "data 1"
test "$(cat 352-r0000_log.txt)" = "log 0"
