// User Guide 2.1: struct type and member access
type Employee{ string name; int id; string loc; }
Employee emp; emp.name="Thomas"; emp.id=2222; emp.loc="Chicago";
