test "$(cat baz00.txt)" = hello && test "$(cat baz01.txt)" = middle && test "$(cat baz02.txt)" = goodbye
