type messagefile {}
app (messagefile t) greeting (float m) {
  echo m stdout=@filename(t);
}
messagefile a <"186-float-app-arg-sums.out">;
messagefile b <"186-b.txt">;
a = greeting(42.0 + 12.3);
b = greeting(42.1 + 93.2);
