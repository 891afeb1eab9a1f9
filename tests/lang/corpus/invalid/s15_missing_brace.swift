// expect: unexpected end of file
if (true) { trace(1);
