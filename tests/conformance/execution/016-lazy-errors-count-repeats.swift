// THIS-SCRIPT-SHOULD-FAIL
// lazyErrors (true in the distributed swift.conf): the failed call and its three
// skipped dependants are listed once each distinct message, repeats counted
// "(N times)" as Swift's ProcessBulkErrors did; independent work still runs.
type file;
app (file o) bad() { sh "-c" "exit 1" stdout=@o; }
app (file o) cp(file i) { cat @i stdout=@o; }
app (file o) good() { echo "independent" stdout=@o; }
file a <"016-a.txt">;
a = bad();
file b[] <simple_mapper; prefix="016-b", suffix=".txt">;
foreach i in [0:2] { b[i] = cp(a); }
file g <"016-lazy-errors-count-repeats.out">;
g = good();
