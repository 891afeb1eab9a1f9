// User Guide 2.11.4
iterate i { trace(i); int j = i; // will print 0, 1, 2, and 3
} until (j == 3);
