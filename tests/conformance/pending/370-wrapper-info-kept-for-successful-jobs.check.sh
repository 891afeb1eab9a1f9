set -e
test "$(cat 370-hello.txt)" = hi
ls run001/370-wrapper-info-kept-for-successful-jobs-run001.d/echo-*-info >/dev/null
