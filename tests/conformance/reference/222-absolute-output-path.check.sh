set -e
test "$(cat /tmp/swiftnb-hunter-222-output.txt)" = payload
rm -f /tmp/swiftnb-hunter-222-output.txt
