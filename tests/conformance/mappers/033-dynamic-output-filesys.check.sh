test "$(cat outs/foo0002.out)" = test
