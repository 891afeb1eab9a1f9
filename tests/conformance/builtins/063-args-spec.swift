string a[string] = args("-n=<int>, -name=<string:world>, [-v]");
trace(a["-n"], a["-name"]);
