type messagefile {}
(messagefile t) greeting() {
  app {
    echo "hello" stdout=@filename(t);
  }
}
messagefile o2 = greeting(), o4 = greeting(), o5, o6[];
o5 = greeting();
o6[0] = greeting();
trace("done");
