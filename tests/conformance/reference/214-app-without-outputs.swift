app delay (int i) {
  sleep i;
}
foreach i in [0:2] {
  delay(i %% 2);
}
trace("queued");
