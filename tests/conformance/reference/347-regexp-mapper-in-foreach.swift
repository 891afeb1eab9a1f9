type file;
app (file o) upper (file i) {
  tr "a-z" "A-Z" stdin=@i stdout=@o;
}
file inputs[] <filesys_mapper; prefix="347-", suffix=".in">;
foreach f in inputs {
  file out <regexp_mapper; source=@f, match="(.*)\\.in", transform="\\1.res">;
  out = upper(f);
}
