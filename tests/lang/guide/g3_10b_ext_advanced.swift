// User Guide 3.10 (advanced; the variables it uses declared)
type file_dat;
string str_root = "aaa"; int pid = 3; int n = 10;
file_dat dat_files[][] < ext; exec="mapper.sh", padding=3, location="output", prefix=@strcat( str_root, "_" ), suffix=".dat", outer_index=pid, mod_index=n >;
