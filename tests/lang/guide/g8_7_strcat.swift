// User Guide 8.7
string a = "x"; string b = "y";
string c = @strcat(a,b,"z",1);
string d = a + b;
