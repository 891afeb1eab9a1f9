test "$(cat 168-data.jpg)" = G
