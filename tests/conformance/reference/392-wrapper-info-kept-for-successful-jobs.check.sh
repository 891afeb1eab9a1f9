set -e
test "$(cat 392-hello.txt)" = hi
ls run001/392-wrapper-info-kept-for-successful-jobs-run001.d/echo-*-info >/dev/null
