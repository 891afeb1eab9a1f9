type Employee { string name; int id; string loc; }
Employee emps[] = readData("284-emps.txt");
trace(emps[1].name, emps[1].id, emps[1].loc);
