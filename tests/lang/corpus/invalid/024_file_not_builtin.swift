// expect: Type file is not defined.
file f <"a.txt">;
