type F;
type S {
  F a;
  F b;
}
app (S output[][]) touchall () {
  touch @filenames(output);
}
S o[][] <ext; exec="166-mapper.sh">;
o = touchall();
