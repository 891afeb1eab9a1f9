"""-resume with restart logs that are missing, corrupt, or whose outputs were deleted."""

from __future__ import annotations

import pytest

from robusthelp import swiftnb

pytestmark = pytest.mark.timeout(90)

TWO_STEPS = """\
type file;
app (file o) first() { echo "one" stdout=@o; }
app (file o) second(file i, int fail) { sh "-c" "test $1 = 0 && cat $0" @i fail stdout=@o; }
file a <"a.txt">;
file b <"b.txt">;
int fail = toInt(arg("fail"));
a = first();
b = second(a, fail);
"""


def test_resume_remakes_an_output_deleted_since(tmp_path, write):
    write("two.swift", TWO_STEPS)
    r = swiftnb("run", "two.swift", "-fail=1", cwd=tmp_path)
    assert r.returncode == 2
    rlog = tmp_path / "run001" / "two-run001.0.rlog"
    assert rlog.read_text().splitlines()[2:] == ["a.txt"]
    (tmp_path / "a.txt").unlink()  # the user cleaned up before resuming
    r = swiftnb("run", "-resume", str(rlog), "two.swift", "-fail=0", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "b.txt").read_text() == "one\n"
    assert "Finished in previous run" not in r.stderr


@pytest.mark.parametrize("content,says", [
    (None, "no such restart log"),
    (b"garbage\n\x00\xff", "is not a Swift restart log (no format version line)"),
    (b"", "is not a Swift restart log"),
    (b"# Log file created x\n# Format version 1.0\n", "has format version 1.0"),
])
def test_unusable_restart_logs(tmp_path, write, cli, content, says):
    write("two.swift", TWO_STEPS)
    if content is not None:
        write("x.rlog", content)
    r = cli("run", "-resume", "x.rlog", "two.swift", "-fail=0")
    assert r.returncode == 1 and says in r.stderr, r.stderr
    assert not (tmp_path / "a.txt").exists()
