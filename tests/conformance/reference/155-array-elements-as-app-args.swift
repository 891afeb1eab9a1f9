type messagefile {}
app (messagefile t) greeting (string s[]) {
  echo s[0] s[2] s[1] stdout=@filename(t);
}
messagefile outfile <"155-array-elements-as-app-args.out">;
string words[] = ["how", "are", "you"];
outfile = greeting(words);
