if ls 296-iter.*.tmp 2>/dev/null; then echo "temporary file not removed"; exit 1; fi
