"""A script is UTF-8 text: one that is not (Latin-1, binary) is refused with the place and
value of its first bad byte, as a configuration file is, never read with replacement
characters that would end up in strings and file names (issue 14, item 9)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swiftnb import lang


def test_a_latin1_script_is_refused_with_line_column_and_byte(tmp_path):
    script = tmp_path / "latin.swift"
    script.write_bytes(b'trace("ok");\ntrace("caf\xe9");\n')
    with pytest.raises(lang.CompileError) as caught:
        lang.load(script)
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (2, 11)
    assert diagnostic.message == ("not a UTF-8 text file (line 2: byte 0xe9); "
                                  "save it as UTF-8")


def test_an_imported_file_is_held_to_the_same_rule(tmp_path):
    (tmp_path / "lib.swift").write_bytes(b"int x = 1; // \xff\n")
    main = tmp_path / "main.swift"
    main.write_text('import "lib";\ntrace(x);\n')
    with pytest.raises(lang.CompileError) as caught:
        lang.load(main)
    assert any(d.message.startswith("not a UTF-8 text file (line 1: byte 0xff)")
               and d.file.endswith("lib.swift") for d in caught.value.diagnostics)


def test_a_bom_is_dropped_and_utf8_text_kept(tmp_path):
    script = tmp_path / "bom.swift"
    script.write_bytes('\ufefftrace("café");\n'.encode())
    assert lang.read_script(str(script)) == 'trace("café");\n'


def test_swiftnb_run_refuses_it_and_runs_nothing(tmp_path):
    (tmp_path / "latin.swift").write_bytes(b'trace("caf\xe9");\n')
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "latin.swift"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "latin.swift:1:11: not a UTF-8 text file (line 1: byte 0xe9)" in r.stderr
    assert not list(tmp_path.glob("run*"))
