# the three skipped cat calls: JOB_INIT in the log, "Initializing:3" in the final ticker line
set -e
test "$(grep -c ' JOB_INIT jobid=cat-' run001/*.log)" = 3
grep -q '^Final status: .*  Initializing:3  Failed:1$' run001/swift.out
