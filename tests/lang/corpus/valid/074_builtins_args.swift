string name = arg("name", "world");
string req = arg("input");
string[string] opts = args("-min:<int> -max:<int>");
string lines[] = system("ls");
string e = getEnv("HOME");
trace(name, req, opts["min"], lines[0], e);
