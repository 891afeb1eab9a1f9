test "$(cat input.copy)" = payload
