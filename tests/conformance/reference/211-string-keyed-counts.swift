int counts[string];
string words[] = ["apple", "pear", "fig"];
foreach w in words {
  counts[w] = strstr(w, "p") + 1;
}
trace(counts);
foreach c, w in counts {
  tracef("%s=%i\n", w, c);
}
