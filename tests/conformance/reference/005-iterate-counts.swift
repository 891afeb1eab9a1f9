iterate i {
  trace("i", i);
} until (i == 2);
