trace(strsplit("a,b,,c", ","));
trace(strsplit("a,b,c,,", ","));
trace(length(strsplit("abc", ",")));
