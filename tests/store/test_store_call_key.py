"""A call's key made from the app's template (swiftnb/store/callkey.py) is the key the
canonical JSON of its parts gives, so that the calls of stores written before it keep
matching: the template against the dict's encoding for awkward names, and a real
StoreMemo's recorded key against the parts written out here by hand."""

from __future__ import annotations

import asyncio
import os

import pytest

from swiftnb.engine.task import Task, TaskResult
from swiftnb.store import RunRecord, RunStore
from swiftnb.store.callkey import AppParts, CallKey, digest_text
from swiftnb.store.canonical import ascii_sorted_text, sorted_text
from swiftnb.store.digests import file_digest
from swiftnb.store.memo import StoreMemo

pytestmark = pytest.mark.timeout(60)

APP = AppParts("/bin/cat", digest_text("app"), digest_text("env"), digest_text("profiles"),
               opted_out=False)

INPUT_SETS = {
    "none": {},
    "unsorted": {"z/last.txt": "sha256:" + "1" * 64, "a/first.txt": "sha256:" + "2" * 64,
                 "m.txt": "sha256:" + "3" * 64},
    "not ascii": {"données/été.txt": "sha256:" + "4" * 64},
    "quotes and backslashes": {'we"ird\\name.txt': "sha256:" + "5" * 64},
    "control characters": {"tab\there\nnewline": "sha256:" + "6" * 64},
    "not utf-8": {os.fsdecode(b"bad\xffname"): "sha256:" + "7" * 64},
    "missing input": {"gone.txt": ""},
}


@pytest.mark.parametrize("name", sorted(INPUT_SETS))
def test_the_template_gives_the_key_of_the_parts_canonical_json(name):
    inputs = INPUT_SETS[name]
    made = CallKey.make(APP, digest_text("args"), digest_text("stdio"), digest_text("outs"),
                        dict(inputs), [])
    parts = {"app": APP.app, "args": digest_text("args"), "env": APP.env,
             "outputs": digest_text("outs"), "profiles": APP.profiles,
             "stdio": digest_text("stdio")}
    parts.update((f"input:{path}", digest) for path, digest in inputs.items())
    assert made.parts == parts
    assert made.key == digest_text(sorted_text(parts))
    assert made.parts_text == ascii_sorted_text(parts)


def test_a_recorded_key_is_the_one_earlier_versions_made(tmp_path):
    """The key and parts of a real call as the format has been since the store began:
    each part the digest of its canonical JSON, the key the digest of theirs."""
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "data"))
    os.makedirs(os.path.join(root, "out"))
    with open(os.path.join(root, "data", "in.txt"), "w") as fh:
        fh.write("some input\n")
    task = Task(jobid="cat-1", tr="cat", args=["-n", "data/in.txt"], base_dir=root,
                run_dir=root, stdout="out/f.txt", inputs=["data/in.txt"],
                outputs=["out/f.txt"], env={"LC_ALL": "C"}, profiles={"threads": "2",
                                                                      "maxwalltime": "5"})
    store = RunStore.open(os.path.join(root, ".swiftnb"))
    store.begin_run(RunRecord("run1", "key.swift"))
    memo = StoreMemo(store, "run1", app_executable=lambda tr: "/bin/cat")

    async def body() -> None:
        decision = await memo.decide(task)
        assert not decision.reuse
        with open(os.path.join(root, "out", "f.txt"), "w") as fh:
            fh.write("     1\tsome input\n")
        result = TaskResult(ok=True, exit_code=0, site="local", output_digests={
            "out/f.txt": file_digest(os.path.join(root, "out", "f.txt"))})
        await memo.remember(task, result, decision, 1.0, 2.0)

    asyncio.run(body())
    memo.close()
    [call] = store.call_records("run1")
    store.close()
    input_digest = file_digest(os.path.join(root, "data", "in.txt"))
    expected = {
        "app": digest_text(sorted_text([["cat", "/bin/cat", file_digest("/bin/cat")]])),
        "args": digest_text(sorted_text([["-n", "data/in.txt"]])),
        "stdio": digest_text(sorted_text([[None, "out/f.txt", None]])),
        "outputs": digest_text(sorted_text(["out/f.txt"])),
        "env": digest_text(sorted_text({"LC_ALL": "C"})),
        "profiles": digest_text(sorted_text({"threads": "2"})),
        "input:data/in.txt": input_digest,
    }
    assert call.key_parts == expected
    assert call.key == digest_text(sorted_text(expected))
    assert call.command == ["/bin/cat", "-n", "data/in.txt"]
    assert [(f.path, f.digest) for f in call.inputs] == [
        (os.path.join(root, "data", "in.txt"), input_digest)]
