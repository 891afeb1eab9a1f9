string lines[] = system("echo a; echo 'b c'");
trace(lines);
trace(length(lines));
