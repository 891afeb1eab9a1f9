set -e
grep -qx 'The following errors have occurred:' run001/swift.out
grep -qx '2. Swift: Application cat not executed due to errors in dependencies (3 times)' run001/swift.out
! grep -q '^3\. ' run001/swift.out
test ! -e 016-a.txt && test ! -e 016-b0000.txt
