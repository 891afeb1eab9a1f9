int a = 1;
if (true) { int b = a + 1; trace(b); }
