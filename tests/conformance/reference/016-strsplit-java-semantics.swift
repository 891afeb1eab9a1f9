string parts[] = strsplit("a,b,,c,,", ",");
trace(parts);
trace(length(parts));
