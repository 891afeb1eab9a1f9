iterate i {
  trace(i); // will print 0, 1, and 2
} until (i == 3);
