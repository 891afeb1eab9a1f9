fprintf("047-fprintf.out", "a %i %s\n", 1, "b");
