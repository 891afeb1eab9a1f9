"""``stdout=f`` / ``stdin=f`` / ``stderr=f`` with a bare file variable: Swift took the
variable's file name (pending conformance 203).  The engine side: the redirection is the
mapped path of the file, an input waited for like any other input."""

from __future__ import annotations


def test_bare_file_variables_in_redirections(swift, tmp_path) -> None:
    (tmp_path / "in.txt").write_text("from stdin\n")
    src = """type file;
app (file o) echo (string s) { echo s stdout=o; }
app (file o, file e) copy (file i) { sh "-c" "cat; echo oops >&2" stdin=i stdout=o stderr=e; }
file a <"a.out">;
a = echo("direct");
file inp <"in.txt">;
file b <"b.out">;
file err <"b.err">;
(b, err) = copy(inp);
file t;
t = echo("via temp");
file c <"c.out">;
(c, err2) = copy(t);
file err2 <"c.err">;
"""
    r = swift(src)
    assert r.outcome.ok, r.outcome.errors
    assert (tmp_path / "a.out").read_text() == "direct\n"
    assert (tmp_path / "b.out").read_text() == "from stdin\n"
    assert (tmp_path / "b.err").read_text() == "oops\n"
    assert (tmp_path / "c.out").read_text() == "via temp\n"
    tasks = {t.stdout: t for t in r.executor.tasks}
    assert tasks["b.out"].stdin == "in.txt" and tasks["b.out"].stderr == "b.err"
