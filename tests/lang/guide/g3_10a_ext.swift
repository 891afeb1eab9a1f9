// User Guide 3.10
type file;
type student { file name; file age; file GPA; }
student stus[] <ext;exec="mapper.sh">;
