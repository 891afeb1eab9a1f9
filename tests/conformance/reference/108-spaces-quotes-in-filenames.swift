type messagefile;
(messagefile t) make() {
    app {
       touch @filename(t);
    }
}
messagefile a <"108-x\" space .out">;
a = make();
messagefile b <"108-y' sp'ace .out">;
b = make();
