type S { int a; }
S xs[];
xs[0].a = 1;
xs[1].a = 2;
trace(xs);
