type messagefile;
(messagefile t) inner_greeting() {
    app {
        echo "hello" stdout=@filename(t);
    }
}
(string s) outer_greeting() {
  messagefile m <"132-inner.txt">;
  m = inner_greeting();
  s = readData(m);
}
trace(outer_greeting());
