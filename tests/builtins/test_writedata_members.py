"""``writeData`` of a struct writes one row of single values (0.96's format, reference
2.4); a member that is itself a struct or an array, for which 0.96 failed with a null
pointer, is refused by name instead of being written as its debug string."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")


@pytest.mark.parametrize("member, kind", [("In inner", "a struct"), ("int inner[]", "an array")])
def test_a_composite_member_is_refused_by_name(tmp_path: Path, member: str, kind: str) -> None:
    assign = "p.inner.a = 2;" if kind == "a struct" else "p.inner[0] = 2;"
    (tmp_path / "s.swift").write_text(f"""type file;
type In {{ int a; }}
type P {{ int x; {member}; }}
P p; p.x = 1; {assign}
file f <"p.out"> = writeData(p);
""")
    p = subprocess.run([SWIFTNB, "s.swift"], cwd=tmp_path, text=True, capture_output=True,
                       timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"writeData: p.inner is {kind}; a struct is written as one row" in p.stderr
    assert "s.swift, line: 5" in p.stderr
    assert not (tmp_path / "p.out").exists()
