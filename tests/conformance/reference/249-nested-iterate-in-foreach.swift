foreach k in [1:2] {
  iterate i {
    trace(k, i);
  } until (i == k);
}
