// THIS-SCRIPT-SHOULD-FAIL
type Employee{ string name; int id; string loc; }
Employee emps[] = readData("039-emps.txt");
trace(emps[0].name);
