// -dryrun runs the script but no app.
type file;
app (file o) greet() {
    echo "hi" stdout=@o;
}
file o <"013-dry.txt">;
o = greet();
trace("script ran");
