// expect: 4:3: variable level is not writeable in this scope (procedure raise reads the global level but cannot assign it
global int level;
raise() {
  level = 2;
}
raise();
trace(level);
