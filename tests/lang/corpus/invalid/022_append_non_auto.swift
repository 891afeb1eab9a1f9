// expect: Append (<<) can only be used on arrays with auto keys
int a[];
a << 1;
