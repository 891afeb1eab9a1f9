"""The house rule of docs/design.md's conventions: a ``# type: ignore`` names the error it
silences and says why, so that each one can be judged (and removed) on its own."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "swiftnb"
#: ``# type: ignore[code, ...]`` then ``# reason`` on the same line
WITH_REASON = re.compile(r"#\s*type:\s*ignore\[[\w,\s-]+\]\s+#\s*\S")


def test_every_type_ignore_names_its_error_and_says_why() -> None:
    bare = [f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
            for path in sorted(PACKAGE.rglob("*.py"))
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(r"#\s*type:\s*ignore", line) and not WITH_REASON.search(line)]
    assert bare == [], "type: ignore without its code and reason:\n" + "\n".join(bare)


def test_the_rule_sees_a_bare_ignore() -> None:
    assert not WITH_REASON.search("x = f()  # type: ignore")
    assert not WITH_REASON.search("x = f()  # type: ignore[arg-type]")
    assert WITH_REASON.search("x = f()  # type: ignore[arg-type]  # lark sets it")
