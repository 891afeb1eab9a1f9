type file;
app (file o) copy (file i) {
  cat @i stdout=@o;
}
file input <"168-data.gif">;
file output <regexp_mapper; source=@input, match="(.*)\\.gif", transform="\\1.jpg">;
output = copy(input);
trace(@output);
