"""The whole-file-or-nothing write of ``writeData`` and trunk's ``write``: a write that
fails after its temporary was made removes the temporary too."""

from __future__ import annotations

from pathlib import Path

import pytest

from swiftnb.engine.builtins.io import write_text
from swiftnb.engine.data import BuiltinError, FileValue, SimpleContext


def test_a_failed_write_leaves_no_temporary(tmp_path: Path) -> None:
    # the destination is a folder: the temporary beside it is written, the rename fails
    (tmp_path / "out").mkdir()
    ctx = SimpleContext(base_dir=str(tmp_path), run_dir=str(tmp_path))
    with pytest.raises(BuiltinError, match="writeData: cannot write out"):
        write_text(ctx, FileValue("f", "file", "out"), "1 2 3\n", "writeData")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]

