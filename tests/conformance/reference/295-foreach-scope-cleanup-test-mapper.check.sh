if ls 295-scope.*.tmp 2>/dev/null; then echo "temporary file not removed"; exit 1; fi
