import "lib/defs";
file f <"a.txt">;
trace(helper(2));
