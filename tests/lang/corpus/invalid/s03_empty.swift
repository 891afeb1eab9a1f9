// expect: the program is empty
