"""How memoization keeps the outputs of calls that ran (docs/memoization.md, "What it
costs"): a hard link into the content store, so an output deleted or replaced since
is restored; an output rewritten in place takes its kept copy with it, and that copy
is never restored (its bytes are checked): the call runs again.  And the digests the
job wrapper reported are remembered, so a re-run reads none of the outputs."""

from __future__ import annotations

import os
from collections import Counter

import pytest

from swiftnb.store import RunStore
from workflow import Workflow

pytestmark = pytest.mark.timeout(300)

ALL = Counter({"up": 3, "combine": 1, "summary": 1})


@pytest.fixture
def wf(tmp_path):
    flow = Workflow(tmp_path)
    assert flow.memo().ran == ALL
    return flow


def kept_file(root, digest: str) -> str:
    with RunStore.open(root / ".swiftnb") as store:
        return store.objects.path_of(digest)


def output_digest(root, path: str) -> str:
    with RunStore.open(root / ".swiftnb") as store:
        record = store.producer(str(root / path))
    assert record is not None
    return record.outputs[0].digest


def test_outputs_are_kept_by_hard_link_and_their_digests_remembered(wf):
    out = wf.root / "out" / "up-a.txt"
    digest = output_digest(wf.root, "out/up-a.txt")
    assert os.path.samefile(out, kept_file(wf.root, digest))
    assert os.stat(out).st_nlink == 2
    with RunStore.open(wf.root / ".swiftnb") as store:
        for name in ("up-a.txt", "up-b.txt", "up-c.txt", "all.txt", "summary.txt"):
            store.digests.digest(str(wf.root / "out" / name))
        assert store.digests.reads == 0  # the wrapper's digests, remembered by the run


def test_an_output_replaced_by_a_new_file_is_restored_from_its_link(wf):
    out = wf.root / "out" / "up-a.txt"
    replacement = wf.root / "out" / "up-a.new"
    replacement.write_text("edited elsewhere\n")
    os.replace(replacement, out)  # what an editor that saves by rename does
    again = wf.memo()
    assert again.ran == Counter() and again.cached == 5 and again.restored == 1
    assert out.read_text() == "A bAnAnA\n"


def test_an_output_rewritten_in_place_is_not_restored_from_the_shared_copy(wf):
    out = wf.root / "out" / "up-a.txt"
    digest = output_digest(wf.root, "out/up-a.txt")
    with open(out, "r+") as fh:  # in place, the same size: the kept link changes too
        fh.write("X")
    assert open(kept_file(wf.root, digest)).read() == "X bAnAnA\n"
    again = wf.memo()
    # its call runs (the kept bytes are not its digest's), and makes the same output:
    # nothing downstream runs
    assert again.ran == Counter({"up": 1}) and again.cached == 4 and again.restored == 0
    assert again.not_cached == ["output changed: out/up-a.txt"]
    assert out.read_text() == "A bAnAnA\n"
    assert os.path.samefile(out, kept_file(wf.root, digest))  # kept again, whole
    out.unlink()
    assert wf.memo().restored == 1
    assert out.read_text() == "A bAnAnA\n"
