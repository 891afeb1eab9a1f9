test "$(wc -l < 009.attempts)" -eq 3
