// THIS-SCRIPT-SHOULD-FAIL
type file {};
type student {
  file name;
  file age;
}
app (file t) getname(string n) {
        echo n stdout=@filename(t);
}
file results <single_file_mapper; file="201-sinfo.txt">;
student fnames[] <csv_mapper; file="201-stu_list.txt">
results = getname(@filename(fnames[0]));
