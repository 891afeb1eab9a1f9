// Swift 0.96's distributed swift.conf sets alwaysTransferWrapperLog: true (reference
// 4.1/4.2), so every job's wrapper info file is copied to RUNDIR/SCRIPT-RUNID.d/,
// successful ones too; swiftnb keeps only failed jobs' JOBID-info there.
type file;
app (file o) greet(string s) { echo s stdout=@o; }
file f <"392-hello.txt">;
f = greet("hi");
