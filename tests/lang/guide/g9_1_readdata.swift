// User Guide 9.1
type Employee{ string name; int id; string loc; } Employee emps[] = readData("emps.txt");
foreach emp in emps{ tracef("Employee %s lives in %s and has id %d", emp.name, emp.loc, emp.id); }
