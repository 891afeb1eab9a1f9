type messagefile {}
app (messagefile t) greeting (int m) {
  echo m stdout=@filename(t);
}
messagefile outfile <"188-unary-minus-app-arg.out">;
int j = 989929;
int i = -j;
outfile = greeting(i);
