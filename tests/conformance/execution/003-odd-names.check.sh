test "$(cat 'out put; rm -rf data.txt')" = "odd"
test -d data
