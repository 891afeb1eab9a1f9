"""The script corpus: every valid script checks, every invalid one fails with its message.

Invalid scripts carry their expected diagnostics in leading ``// expect: TEXT`` lines;
each TEXT must appear in the rendered error (TEXT may start with ``line:col:``).
The User Guide examples (tests/lang/guide) are written out one per file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swiftnb import lang

HERE = Path(__file__).parent
VALID = sorted((HERE / "corpus" / "valid").glob("*.swift"))
INVALID = sorted((HERE / "corpus" / "invalid").glob("*.swift"))
GUIDE = sorted(p for p in (HERE / "guide").glob("*.swift") if p.name != "defs.swift")


def _expectations(path: Path) -> list[str]:
    return [line[len("// expect:"):].strip() for line in path.read_text().splitlines()
            if line.startswith("// expect:")]


def test_corpus_sizes() -> None:
    assert len(VALID) >= 60
    assert len(INVALID) >= 40
    assert len(GUIDE) >= 50


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_script_checks(path: Path) -> None:
    checked = lang.load(path, search_path=[])
    assert checked.program.statements or checked.program.procedures
    assert "program is valid" in checked.summary()
    # `// warns: TEXT` lines: warnings the script must give
    for line in path.read_text().splitlines():
        if line.startswith("// warns:"):
            text = line[len("// warns:"):].strip()
            assert any(text in w for w in checked.warnings), (text, checked.warnings)


@pytest.mark.parametrize("path", GUIDE, ids=lambda p: p.name)
def test_user_guide_example_checks(path: Path) -> None:
    lang.load(path, search_path=[])


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_script_is_rejected_with_its_message(path: Path) -> None:
    expected = _expectations(path)
    assert expected, f"{path.name} has no // expect: line"
    with pytest.raises(lang.CompileError) as info:
        lang.load(path, search_path=[])
    rendered = info.value.render()
    for text in expected:
        assert text in rendered, f"expected {text!r} in:\n{rendered}"
    # errors are for people: position, source line, caret; no Python or lark internals
    first = info.value.diagnostics[0]
    assert rendered.startswith(f"{path}:{first.line}:{first.column}: ")
    assert "Traceback" not in rendered and "Token(" not in rendered
    assert "__ANON" not in rendered and "SEMICOLON" not in rendered
