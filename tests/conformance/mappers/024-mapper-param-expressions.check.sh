test -f run_0000.log
