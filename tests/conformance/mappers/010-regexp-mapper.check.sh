test "$(cat picture.jpg)" = img
