// expect: Items of the auto-keyed array array cannot be accessed with a key of type int
int[auto] array;
array[0] = 1;
