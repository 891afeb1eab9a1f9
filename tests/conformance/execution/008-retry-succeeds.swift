// executionRetries: the first attempt fails, the retry succeeds.  The marker lives in
// the case folder, five levels above the job directory (swiftwork/SCRIPT-RUNID/jobs/X/ID).
type file;
app (file o) flaky() {
    sh "-c" "m=../../../../../008.marker; if [ -e $m ]; then echo second; else touch $m; exit 1; fi" stdout=@o;
}
file o <"008-retry-succeeds.out">;
o = flaky();
