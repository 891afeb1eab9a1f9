test "$(sort -n 012.calls | tr '\n' ' ')" = "4 5 "
test "$(cat res/r0001.txt)" = "old-1" && test "$(cat res/r0005.txt)" = "new-5"
test ! -e 012-resume.rlog
