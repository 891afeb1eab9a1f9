test "$(cat hello.jpg)" = hello.gif
