type file;
app (file o) upper (file i) {
  tr "a-z" "A-Z" stdin=@i stdout=@o;
}
file inputs[] <filesys_mapper; prefix="346-", suffix=".in">;
string names[] = filenames(inputs);
foreach n, i in names {
  file out <single_file_mapper; file=regexp(n, "\\.in$", ".up")>;
  out = upper(inputs[i]);
}
