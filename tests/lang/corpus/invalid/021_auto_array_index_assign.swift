// expect: Supplied array index type (int) does not match the declared index type (auto)
int[auto] array;
array[0] = 1;
