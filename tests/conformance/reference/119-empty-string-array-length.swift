string empty[];
trace(length(empty));
foreach x in empty {
  trace("never", x);
}
