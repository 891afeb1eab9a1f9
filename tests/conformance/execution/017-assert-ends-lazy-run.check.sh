set -e
grep -q 'swift: assert failed: x is not four' run001/swift.out
grep -A2 -x 'Execution failed:' run001/swift.out | tr '\n' '|' | grep -q '^Execution failed:|x is not four|	assert @ 017-assert-ends-lazy-run.swift, line: 6|'
! grep -q 'The following errors have occurred' run001/swift.out
