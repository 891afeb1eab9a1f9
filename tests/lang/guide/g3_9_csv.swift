// User Guide 3.9
type file;
type student { file name; file age; file GPA; }
student stus[] <csv_mapper;file="stu_list.txt">;
