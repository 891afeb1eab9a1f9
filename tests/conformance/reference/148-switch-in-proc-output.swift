(string name) dayname (int d) {
  switch (d) {
    case 0:
      name = "Sun";
    case 1:
      name = "Mon";
    default:
      name = "other";
  }
}
trace(dayname(0), dayname(1), dayname(5));
