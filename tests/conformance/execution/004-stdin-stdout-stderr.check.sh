test "$(cat 004-err.txt)" = "warned"
