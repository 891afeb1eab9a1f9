iterate i {
  trace("body", i);
} until (true);
