type Employee{ string name; int id; string loc; }
Employee emps[] = readData("038-emps.txt");
foreach emp in emps {
  tracef("Employee %s lives in %s and has id %d\n", emp.name, emp.loc, emp.id);
}
