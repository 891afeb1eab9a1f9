type Employee { string name; int id; string loc; }
Employee emp;
emp.name = "Thomas";
emp.id = 2222;
emp.loc = "Chicago";
trace(emp);
trace(emp.name, emp.id);
