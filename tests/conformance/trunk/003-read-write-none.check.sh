# write(None) writes the bare value, no newline
[ "$(cat i.txt)" = 42 ] && [ "$(cat f.txt)" = 2.0 ] && [ "$(cat b.txt)" = true ] && [ "$(wc -c < s.txt)" -eq 8 ]
