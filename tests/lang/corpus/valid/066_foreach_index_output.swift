type file;
app (file o) rotate(file i, int angle) { convert "-rotate" angle @i @o; }
file frames[] <filesys_mapper; pattern="*.jpg">;
file output[] <simple_mapper; prefix="rot">;
foreach f, ix in frames {
    output[ix] = rotate(f, 180);
}
