type file {}
app (file t) echo_array (string s[][]) {
  echo s[0][1] s[1][0] stdout=@filename(t);
}
string greetings[][] = [ [ "left", "right" ], ["up", "down"]];
file hw <"156-2d-array-app-args.out">;
hw = echo_array(greetings);
