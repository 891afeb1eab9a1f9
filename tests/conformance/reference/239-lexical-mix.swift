/* a block
   comment */
type file {};
int fork = 3;     # shell-style comment
int iffy = 4;     // c++ comment
int stdoutx = fork + iffy; /* inline */ trace(stdoutx);
type pair { int a, b; string tags[]; }
pair p;
p.a = 1; p.b = 2; p.tags[0] = "t";
trace(p.a + p.b, p.tags[0]);
int xs[] = [1, 2, 3,];
trace(length(xs));
