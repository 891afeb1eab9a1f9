// expect: Type foo is not defined.
foo x;
