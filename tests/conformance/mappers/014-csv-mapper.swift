type file;
type student { file name; file age; file gpa; }
student stus[] <csv_mapper; file="stu_list.txt">;
trace(@stus[0].name, @stus[1].gpa, @stus[2].age);
trace(length(stus));
