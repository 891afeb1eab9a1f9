set -e
test -f 297-alias.2.out
if ls 297-alias.*.tmp 2>/dev/null; then echo "temporary file not removed"; exit 1; fi
