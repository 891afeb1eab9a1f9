set -e
test "$(cat 392-hello.txt)" = hi
# Swift 0.96 kept one RUN.d/JOBID-info file per job; swiftnb appends the same records
# to one RUN.d/jobs-info file (docs/running.md; wrapperLogPerJob: true for the old layout)
grep -q '^==> echo-.*-info ([0-9]* bytes) <==$' run001/392-wrapper-info-kept-for-successful-jobs-run001.d/jobs-info
grep -q 'EXIT_CODE=0' run001/392-wrapper-info-kept-for-successful-jobs-run001.d/jobs-info
