int[string] age;
age["bob"] = 30;
string who = "bob";
trace(age[who]);
