type file;
(file t) greeting(string m) {
    app {
        echo m stdout=@filename(t);
    }
}
(file first) compound() {
  string third = "f";
  first = greeting(third);
}
(file first) compoundB() {
  first = compound();
}
file a <"213-nested-single-compound.out">;
a = compoundB();
