test "$(cat 353-nested/dir/out.txt)" = deep
