type file;
app (file o) hello (string who) {
  echo stdout=@o "hello" who;
}
file o <"330-redirect-before-args.out">;
o = hello("you");
