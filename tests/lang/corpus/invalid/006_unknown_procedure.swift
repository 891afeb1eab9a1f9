// expect: No function or procedure 'foo' found.
foo(1);
