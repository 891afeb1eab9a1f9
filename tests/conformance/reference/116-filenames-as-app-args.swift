type file;
app (file o) show (file files[]) {
   echo @filenames(files) stdout=@o;
}
string s[] = [ "116-a.txt", "116-b.txt", "116-c.txt" ];
file f[] <array_mapper; files=s>;
file output <"116-filenames-as-app-args.out">;
output = show(f);
