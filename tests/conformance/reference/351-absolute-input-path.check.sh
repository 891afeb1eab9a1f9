test -s 351-absolute-input-path.out
