// THIS-SCRIPT-SHOULD-FAIL
type messagefile {}
app (messagefile t) greeting (string s) {
  echo s stdout=@filename(t);
}
messagefile outfile <"177-out.txt">;
string message = @arg("text");
outfile = greeting(message);
