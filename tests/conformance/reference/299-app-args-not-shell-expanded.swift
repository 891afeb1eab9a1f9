type file;
app (file o) show (string a, string b, string c) {
  printf "[%s]" a b c "" stdout=@o;
}
file o <"299-app-args-not-shell-expanded.out">;
o = show("*", "$HOME", "a;b");
