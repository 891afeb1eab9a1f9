"""CDM: the policy file (cdm.py) and each policy applied by the wrapper on real files."""

from __future__ import annotations

import os
import sys

import pytest

from swiftnb.remote import wrapper
from swiftnb.execution.cdm import CdmError, CdmPolicyKind, load_policy, parse_policy

pytestmark = pytest.mark.timeout(30)

GUIDE = """\
# Describe CDM for my job
property GATHER_LIMIT 1

rule .*input.txt DIRECT /gpfs/homes/wozniak/data   # a comment after a rule
rule .*xfile*.data BROADCAST /dev/shm
rule .*obs.* LOCAL dd /gpfs/homes/user/data obs=64K
rule .*result.* GATHER /gpfs/results
rule .* DEFAULT
"""


# -- the policy file ----------------------------------------------------------------------

def test_the_guides_example_parses():
    policy = parse_policy(GUIDE)
    assert policy.properties == {"GATHER_LIMIT": "1"}
    assert [(r.kind, r.args, r.line) for r in policy.rules] == [
        (CdmPolicyKind.DIRECT, ("/gpfs/homes/wozniak/data",), 4),
        (CdmPolicyKind.BROADCAST, ("/dev/shm",), 5),
        (CdmPolicyKind.LOCAL, ("dd", "/gpfs/homes/user/data", "obs=64K"), 6),
        (CdmPolicyKind.GATHER, ("/gpfs/results",), 7),
        (CdmPolicyKind.DEFAULT, (), 8),
    ]


def test_the_first_matching_rule_wins_and_no_match_is_default():
    policy = parse_policy("rule .*a.txt DIRECT /one\nrule .*.txt DIRECT /two\n")
    assert policy.rule_for("data/a.txt").args == ("/one",)
    assert policy.rule_for("b.txt").args == ("/two",)
    assert policy.rule_for("b.dat") is None
    # re.match: anchored at the start, so the Guide writes a leading .*
    assert parse_policy("rule input.txt DIRECT /d").rule_for("data/input.txt") is None


def test_an_explicit_default_rule_shadows_later_rules():
    policy = parse_policy("rule .*keep.* DEFAULT\nrule .* DIRECT /d\n")
    assert policy.rule_for("keep.txt").kind is CdmPolicyKind.DEFAULT
    assert policy.directives(["keep.txt", "x.txt"], []) == {"x.txt": ["DIRECT", "/d"]}


def test_directives_keep_only_policies_that_act_in_that_direction():
    policy = parse_policy(GUIDE)
    inputs = ["data/input.txt", "big-xfile.data", "obs.dat", "result.in", "plain.txt"]
    outputs = ["out/input.txt", "result.out", "xfile2.data"]
    assert policy.directives(inputs, outputs) == {
        "data/input.txt": ["DIRECT", "/gpfs/homes/wozniak/data"],
        "big-xfile.data": ["BROADCAST", "/dev/shm"],
        "obs.dat": ["LOCAL", "dd", "/gpfs/homes/user/data", "obs=64K"],
        "out/input.txt": ["DIRECT", "/gpfs/homes/wozniak/data"],
        "result.out": ["GATHER", "/gpfs/results"],
    }


def test_a_hash_inside_a_pattern_is_not_a_comment():
    assert parse_policy("rule .*#1.txt DIRECT /d").rule_for("a#1.txt") is not None


@pytest.mark.parametrize("text, message", [
    ("# ok\n\nrule .* DIRCT /d\n", "fs.data:3: unknown CDM policy 'DIRCT' (did you mean DIRECT?)"),
    ("rule .* broadcast /d\n", "fs.data:1: unknown CDM policy 'broadcast' (did you mean BROADCAST?)"),
    ("rule .* GATHRE /d\n", "fs.data:1: unknown CDM policy 'GATHRE' (did you mean GATHER?)"),
    ("\nrule ( DIRECT /d\n", "fs.data:2: bad regular expression '(': missing ), unterminated subpattern"),
    ("rule .*\n", "fs.data:1: a rule needs a pattern and a policy"),
    ("rule .* DIRECT\n", "fs.data:1: DIRECT needs exactly one directory"),
    ("rule .* GATHER /a /b\n", "fs.data:1: GATHER needs exactly one directory: rule REGEX GATHER DIR (got 2"),
    ("rule .* LOCAL rsync /d\n", "fs.data:1: LOCAL copies with cp or dd, not 'rsync'"),
    ("rule .* LOCAL cp\n", "fs.data:1: LOCAL needs a tool and a directory"),
    ("rule .* DEFAULT /d\n", "fs.data:1: DEFAULT takes no arguments"),
    ("property GATHER_LIMIT\n", "fs.data:1: a property needs a name and a value"),
    ("rules .* DIRECT /d\n", "fs.data:1: unknown directive 'rules' (expected 'rule' or 'property')"),
])
def test_errors_name_the_file_and_line(text, message):
    with pytest.raises(CdmError) as info:
        parse_policy(text)
    assert str(info.value).startswith(message)


def test_load_policy_names_the_file(tmp_path):
    path = tmp_path / "fs.data"
    path.write_text("property P v w\nrule .* LOCAL cp /d -p\n")
    policy = load_policy(str(path))
    assert policy.properties == {"P": "v w"}
    assert policy.rules[0].directive() == ["LOCAL", "cp", "/d", "-p"]
    path.write_text("rule .* DIRECTT /d\n")
    with pytest.raises(CdmError, match=rf"^{path}:1: unknown CDM policy"):
        load_policy(str(path))
    with pytest.raises(CdmError, match="cannot read"):
        load_policy(str(tmp_path / "missing.data"))


def test_cdm_module_imports_only_the_stdlib():
    import subprocess

    from swiftnb.execution import cdm

    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('c', {cdm.__file__!r})\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['c'] = m\n"
        "spec.loader.exec_module(m)\n"
        "assert not [n for n in sys.modules if n.startswith('swiftnb')]\n"
        "print(m.parse_policy('rule .* DIRECT /d').rules[0].kind.value)\n"
    )
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=20)
    assert out.stdout.strip() == "DIRECT", out.stderr


def test_the_wrapper_does_not_import_cdm():
    import re

    source = open(wrapper.__file__, encoding="utf-8").read()
    assert not re.search(r"^\s*(from|import)\s.*\bcdm\b", source, re.M)


# -- the policies applied by the wrapper --------------------------------------------------

def make_spec(base, **kw):
    spec = {
        "jobid": "app-k0qzzmvr",
        "tr": "sh",
        "executable": None,
        "args": [],
        "base_dir": str(base / "shared"),
        "work_dir": str(base / "swiftwork"),
        "site_run": "script-run001",
        "site": "local",
        "stdin": None,
        "stdout": None,
        "stderr": None,
        "inputs": [],
        "outputs": [],
        "env": {},
        "keep": False,
    }
    spec.update(kw)
    os.makedirs(spec["base_dir"], exist_ok=True)
    return spec


def sh(base, script, **kw):
    return wrapper.run_job(make_spec(base, args=["-c", script], **kw))


def test_direct_input_is_linked_from_dir_and_not_staged(tmp_path):
    gpfs = tmp_path / "gpfs"
    (gpfs / "in").mkdir(parents=True)
    (gpfs / "in/x.txt").write_text("from gpfs\n")
    result = sh(tmp_path, "readlink in/x.txt > where; cat in/x.txt > o.txt",
                inputs=["in/x.txt"], outputs=["o.txt", "where"],
                cdm={"in/x.txt": ["DIRECT", str(gpfs)]})
    assert result["ok"], result["message"]
    # the job read DIR's file through a copy of its own (issue 24: never the file
    # itself), nothing came from (or went to) base_dir's in/x.txt
    assert (tmp_path / "shared/where").read_text().strip() == ""
    assert (tmp_path / "shared/o.txt").read_text() == "from gpfs\n"
    assert not (tmp_path / "shared/in").exists()
    assert result["cdm_actions"] == [f"DIRECT in/x.txt -> {gpfs}/in/x.txt"]
    assert result["staged_out"] == ["o.txt", "where"]
    assert (gpfs / "in/x.txt").read_text() == "from gpfs\n"  # the link went, not the file


def test_direct_input_missing_in_dir_is_a_stage_in_failure(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared/x.txt").write_text("staged copy is not used")
    result = sh(tmp_path, "cat x.txt", inputs=["x.txt"],
                cdm={"x.txt": ["DIRECT", str(tmp_path / "gpfs")]})
    assert not result["ok"]
    assert result["cause"] == "Could not locate input file: x.txt"
    assert result["kind"] == wrapper.KIND_STAGE_IN and result["retryable"] is True


def test_direct_absolute_input_is_joined_as_dir_plus_path(tmp_path):
    data = tmp_path / "fs/dir"
    data.mkdir(parents=True)
    (data / "f.txt").write_text("abs\n")
    path = str(data / "f.txt")
    result = sh(tmp_path, f"cat '{path}' > o.txt", inputs=[path], outputs=["o.txt"],
                cdm={path: ["DIRECT", "/"]})  # the Guide's `rule .*f.txt DIRECT /`
    assert result["ok"], result["message"]
    assert result["cdm_actions"] == [f"DIRECT {path} -> {path}"]
    missing = sh(tmp_path, "true", inputs=[path], cdm={path: ["DIRECT", str(tmp_path / "nowhere")]})
    assert missing["kind"] == wrapper.KIND_STAGE_IN


def test_direct_output_lands_in_dir_and_not_in_base_dir(tmp_path):
    gpfs = tmp_path / "gpfs"
    result = sh(tmp_path, "test -L out/y.txt && echo made > out/y.txt; echo s > s.txt",
                outputs=["out/y.txt", "s.txt"], cdm={"out/y.txt": ["DIRECT", str(gpfs)]})
    assert result["ok"], result["message"]
    assert (gpfs / "out/y.txt").read_text() == "made\n"
    assert not (tmp_path / "shared/out").exists()
    assert result["staged_out"] == ["s.txt"]
    assert result["cdm_actions"] == [f"DIRECT out/y.txt -> {gpfs}/out/y.txt"]


def test_direct_output_not_written_is_the_usual_missing_output_failure(tmp_path):
    result = sh(tmp_path, "true", outputs=["y.txt"], cdm={"y.txt": ["DIRECT", str(tmp_path / "g")]})
    assert not result["ok"]
    assert result["cause"] == "The following output files were not created by the application: y.txt"
    assert result["kind"] == wrapper.KIND_APP_EXIT and result["staged_out"] == []


def test_direct_output_the_app_replaced_by_a_file_still_lands_in_dir(tmp_path):
    gpfs = tmp_path / "gpfs"
    result = sh(tmp_path, "echo new > t && mv t y.txt", outputs=["y.txt"],
                cdm={"y.txt": ["DIRECT", str(gpfs)]})
    assert result["ok"], result["message"]
    assert (gpfs / "y.txt").read_text() == "new\n"
    assert result["staged_out"] == [] and not (tmp_path / "shared/y.txt").exists()


def test_direct_mapped_stdout_is_written_in_dir(tmp_path):
    gpfs = tmp_path / "gpfs"
    result = sh(tmp_path, "echo hello", stdout="logs/o.txt", outputs=["logs/o.txt"],
                cdm={"logs/o.txt": ["DIRECT", str(gpfs)]})
    assert result["ok"], result["message"]
    assert (gpfs / "logs/o.txt").read_text() == "hello\n"
    assert result["staged_out"] == [] and not (tmp_path / "shared/logs").exists()


@pytest.mark.parametrize("directive", [["LOCAL", "cp", "{dir}"], ["LOCAL", "cp", "{dir}", "-p"],
                                       ["LOCAL", "dd", "{dir}", "bs=64K"]])
def test_local_input_is_copied_into_the_job_directory(tmp_path, directive):
    data = tmp_path / "data"
    (data / "d").mkdir(parents=True)
    (data / "d/obs.dat").write_bytes(b"\x00observed\n" * 1000)
    entry = [a.format(dir=data) for a in directive]
    result = sh(tmp_path, "test -f d/obs.dat && test ! -L d/obs.dat && cat d/obs.dat > o.dat",
                inputs=["d/obs.dat"], outputs=["o.dat"], cdm={"d/obs.dat": entry})
    assert result["ok"], result["message"]
    assert (tmp_path / "shared/o.dat").read_bytes() == (data / "d/obs.dat").read_bytes()
    assert result["cdm_actions"] == [f"LOCAL d/obs.dat <- {data}/d/obs.dat ({entry[1]})"]
    assert (data / "d/obs.dat").exists()
    assert not (tmp_path / "swiftwork/script-run001/jobs/a/app-k0qzzmvr").exists()


def test_a_failing_local_copy_is_a_stage_in_failure_with_the_tools_message(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.dat").write_text("x")
    result = sh(tmp_path, "true", inputs=["x.dat"],
                cdm={"x.dat": ["LOCAL", "dd", str(data), "bs=nonsense"]})
    assert not result["ok"] and result["kind"] == wrapper.KIND_STAGE_IN
    assert result["cause"].startswith("Could not copy input file x.dat with dd (exit code ")
    assert "nonsense" in result["cause"]  # dd's own stderr
    missing = sh(tmp_path, "true", inputs=["y.dat"], cdm={"y.dat": ["LOCAL", "cp", str(data)]})
    assert missing["cause"] == "Could not locate input file: y.dat"


def test_broadcast_copies_once_per_node_for_two_jobs(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared/big.data").write_text("payload\n")
    node = tmp_path / "shm"
    results = []
    for i in range(2):
        results.append(sh(tmp_path, f"readlink big.data > w{i}; cat big.data > o{i}",
                          jobid=f"b-{i}", inputs=["big.data"], outputs=[f"o{i}", f"w{i}"],
                          cdm={"big.data": ["BROADCAST", str(node)]}))
        assert results[-1]["ok"], results[-1]["message"]
        if i == 0:
            first_inode = os.stat(node / "big.data").st_ino
    assert os.stat(node / "big.data").st_ino == first_inode  # not copied again
    assert (tmp_path / "shared/w1").read_text().strip() == str(node / "big.data")
    assert (tmp_path / "shared/o1").read_text() == "payload\n"
    assert results[0]["cdm_actions"] == [f"BROADCAST big.data -> {node}/big.data (copied)"]
    assert results[1]["cdm_actions"] == [f"BROADCAST big.data -> {node}/big.data (already on the node)"]
    # a changed input is copied again
    (tmp_path / "shared/big.data").write_text("payload, version 2\n")
    again = sh(tmp_path, "cat big.data > o", jobid="b-3", inputs=["big.data"], outputs=["o"],
               cdm={"big.data": ["BROADCAST", str(node)]})
    assert again["cdm_actions"][0].endswith("(copied)")
    assert (tmp_path / "shared/o").read_text() == "payload, version 2\n"
    assert not [p for p in os.listdir(node) if p.startswith(".")]  # no temporary copies left


def test_gather_output_lands_in_dir_on_the_site(tmp_path):
    results = tmp_path / "results"
    result = sh(tmp_path, "mkdir -p r && echo g > r/a.out && echo d > d.out",
                outputs=["r/a.out", "d.out"], cdm={"r/a.out": ["GATHER", str(results)]})
    assert result["ok"], result["message"]
    assert (results / "r/a.out").read_text() == "g\n"
    assert not (tmp_path / "shared/r/a.out").exists()
    assert result["staged_out"] == ["d.out"]
    assert result["cdm_actions"] == [f"GATHER r/a.out -> {results}/r/a.out"]


def test_gather_output_of_a_failed_app_is_not_moved(tmp_path):
    results = tmp_path / "results"
    result = sh(tmp_path, "echo g > a.out; exit 2", outputs=["a.out"],
                cdm={"a.out": ["GATHER", str(results)]})
    assert not result["ok"] and result["kind"] == wrapper.KIND_APP_EXIT
    assert not results.exists()


def test_a_gather_move_that_fails_is_a_stage_out_failure(tmp_path):
    blocker = tmp_path / "results"
    blocker.write_text("a file where the directory should be")
    result = sh(tmp_path, "echo g > a.out", outputs=["a.out"],
                cdm={"a.out": ["GATHER", str(blocker)]})
    assert not result["ok"]
    assert result["kind"] == wrapper.KIND_STAGE_OUT and result["retryable"] is True
    assert result["cause"].startswith(f"Could not move output ../results/a.out to {blocker}/a.out: ")


def test_a_relative_dir_is_relative_to_the_base_dir(tmp_path):
    result = sh(tmp_path, "echo g > a.out", outputs=["a.out"], cdm={"a.out": ["GATHER", "gathered"]})
    assert result["ok"], result["message"]
    assert (tmp_path / "shared/gathered/a.out").read_text() == "g\n"


@pytest.mark.parametrize("entry", [["LOCAL", "rsync", "/d"], ["DIRECT"], ["NOPE", "/d"], "DIRECT /d"])
def test_a_malformed_directive_is_a_stage_in_failure(tmp_path, entry):
    result = sh(tmp_path, "true", inputs=[], cdm={"x.txt": entry})
    assert not result["ok"] and result["kind"] == wrapper.KIND_STAGE_IN
    assert result["cause"].startswith("Bad CDM directive for x.txt: ")


def test_directives_from_a_policy_drive_the_wrapper_through_spec_from_task(tmp_path):
    from swiftnb.engine.task import Task

    gpfs = tmp_path / "gpfs"
    gpfs.mkdir()
    (gpfs / "input.txt").write_text("direct\n")
    policy = parse_policy(f"rule .*input.txt DIRECT {gpfs}\nrule .*.out GATHER {tmp_path / 'g'}\n")
    task = Task(jobid="cat-1", tr="cat", args=["input.txt"], base_dir=str(tmp_path / "shared"),
                run_dir=str(tmp_path / "run001"), inputs=["input.txt"], outputs=["c.out"],
                stdout="c.out")
    (tmp_path / "shared").mkdir()
    spec = wrapper.spec_from_task(task, cdm=policy.directives(task.inputs, task.outputs))
    assert spec["cdm"] == {"input.txt": ["DIRECT", str(gpfs)], "c.out": ["GATHER", str(tmp_path / "g")]}
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert (tmp_path / "g/c.out").read_text() == "direct\n"
    assert wrapper.spec_from_task(task)["cdm"] == {}
