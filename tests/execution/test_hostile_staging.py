"""Issue 24, the job's boundary: whatever an app does with its files, outputs arrive as
regular files with their content (never a link, never a name shared with another file),
the user's inputs are never written through, temporary names fit NAME_MAX, and a working
directory removed under a running app is the site's failure, not the app's.

Real apps (``sh``) through the wrapper's ``run_job``, and the real ``swiftnb`` command
for the end-to-end cases."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.remote import wrapper
from swiftnb.remote.wrap import files

pytestmark = pytest.mark.timeout(120)

SWIFTNB = str(Path(sys.executable).parent / "swiftnb")


def make_spec(base: Path, **kw) -> dict:
    spec = {
        "jobid": "app-k0qzzmvr", "tr": "sh", "executable": None, "args": [],
        "base_dir": str(base / "run"), "work_dir": str(base / "swiftwork"),
        "site_run": "script-run001", "site": "local", "stdin": None, "stdout": None,
        "stderr": None, "inputs": [], "outputs": [], "env": {}, "keep": False,
    }
    spec.update(kw)
    os.makedirs(spec["base_dir"], exist_ok=True)
    return spec


def sh(base: Path, script: str, *words: str, **kw) -> dict:
    return wrapper.run_job(make_spec(base, args=["-c", script, "sh", *words], **kw))


def _regular(path: Path) -> bool:
    st = os.lstat(path)
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the run that an app links its output to."""
    path = tmp_path / "elsewhere" / "secret.txt"
    path.parent.mkdir()
    path.write_text("secret\n")
    return path


# -- 1. an output that is a link ---------------------------------------------------------

#: the app leaves its output as a link (or a second name) of a regular file
GOOD_LINKS = {
    "link-into-job-dir": 'echo real > real; ln -s "$PWD/real" out.txt',
    "relative-link": "echo real > real; ln -s real out.txt",
    "link-outside": 'ln -s "$1" out.txt',
    "link-to-etc-passwd": "ln -s /etc/passwd out.txt",
    "hard-link-outside": 'ln "$1" out.txt',
    "link-to-link": 'ln -s "$1" l1; ln -s "$PWD/l1" out.txt',
}


@pytest.mark.parametrize("form", sorted(GOOD_LINKS))
def test_an_output_link_arrives_as_a_regular_file_with_its_content(tmp_path, secret, form):
    result = sh(tmp_path, GOOD_LINKS[form], str(secret), outputs=["out.txt"])
    assert result["ok"], result["message"]
    out = tmp_path / "run/out.txt"
    assert _regular(out), f"{form}: the output arrived as {os.lstat(out)}"
    want = {"link-to-etc-passwd": Path("/etc/passwd").read_bytes(),
            "link-into-job-dir": b"real\n", "relative-link": b"real\n"}.get(form, b"secret\n")
    assert out.read_bytes() == want
    assert secret.read_text() == "secret\n" and os.lstat(secret).st_nlink == 1
    out.write_text("changed by the user\n")  # the output is the user's own file now
    assert secret.read_text() == "secret\n"


#: the app leaves something that cannot be an output file
BAD_OUTPUTS = {
    "dangling-link": ("ln -s /nonexistent/x out.txt", "symbolic link to /nonexistent/x, "
                      "which does not exist"),
    "link-to-directory": ("ln -s /etc out.txt", "symbolic link to /etc, which is a directory"),
    "link-to-device": ("ln -s /dev/null out.txt", "which is a character device"),
    "named-pipe": ("mkfifo out.txt", "is a named pipe"),
    "loop": ("ln -s out.txt out.txt", "which does not exist"),
}


@pytest.mark.parametrize("form", sorted(BAD_OUTPUTS))
def test_an_output_that_is_not_a_file_fails_the_call_naming_it(tmp_path, form):
    script, why = BAD_OUTPUTS[form]
    (tmp_path / "run").mkdir()
    (tmp_path / "run/out.txt").write_text("previous\n")
    result = sh(tmp_path, script, outputs=["out.txt"])
    assert not result["ok"]
    assert result["kind"] == wrapper.KIND_APP_EXIT
    assert "out.txt" in result["cause"] and why in result["cause"], result["cause"]
    out = tmp_path / "run/out.txt"
    assert _regular(out) and out.read_text() == "previous\n"  # left as it was


def test_a_dynamic_output_link_is_copied_and_a_dangling_one_fails(tmp_path, secret):
    ok = sh(tmp_path, 'echo b > outs/b.out; ln -s "$1" outs/a.out', str(secret),
            output_globs=["outs/*.out"])
    assert ok["ok"], ok["message"]
    assert ok["staged_out"] == ["outs/a.out", "outs/b.out"]
    for name, text in (("a.out", "secret\n"), ("b.out", "b\n")):
        assert _regular(tmp_path / "run/outs" / name)
        assert (tmp_path / "run/outs" / name).read_text() == text
    bad = sh(tmp_path, "echo c > outs/c.out; ln -s /nonexistent outs/d.out",
             output_globs=["outs/*.out"])
    assert not bad["ok"] and "outs/d.out" in bad["cause"], bad["cause"]
    assert not (tmp_path / "run/outs/c.out").exists()  # nothing of a failed call moved


def test_a_mapped_stdout_replaced_by_a_link_arrives_as_a_file(tmp_path, secret):
    # the capture of a mapped stdout is beside the job directory: an app can reach it
    result = sh(tmp_path, 'echo hi; ln -sf "$1" "$PWD.stdout"', str(secret),
                stdout="log.txt", outputs=["log.txt"])
    assert result["ok"], result["message"]
    assert _regular(tmp_path / "run/log.txt")


def test_an_output_directory_with_links_inside_arrives_as_files(tmp_path, secret):
    result = sh(tmp_path, 'mkdir -p d/e; echo x > d/x; ln -s "$1" d/e/s', str(secret),
                outputs=["d"])
    assert result["ok"], result["message"]
    assert _regular(tmp_path / "run/d/e/s")
    assert (tmp_path / "run/d/e/s").read_text() == "secret\n"
    bad = sh(tmp_path, "mkdir -p d; ln -s /nonexistent d/s", outputs=["d"])
    assert not bad["ok"] and "d/s" in bad["cause"], bad["cause"]


def test_gather_and_direct_outputs_arrive_as_files(tmp_path, secret):
    gather, direct = tmp_path / "gather", tmp_path / "direct"
    result = sh(tmp_path, 'ln -s "$1" g.txt; ln -sf "$1" d.txt', str(secret),
                outputs=["g.txt", "d.txt"],
                cdm={"g.txt": ["GATHER", str(gather)], "d.txt": ["DIRECT", str(direct)]})
    assert result["ok"], result["message"]
    for path in (gather / "g.txt", direct / "d.txt"):
        assert _regular(path), path
        assert path.read_text() == "secret\n"


def test_a_direct_output_left_as_a_dangling_link_in_dir_fails(tmp_path):
    direct = tmp_path / "direct"
    result = sh(tmp_path, 'ln -s /nonexistent "$1/d.txt"', str(direct), outputs=["d.txt"],
                cdm={"d.txt": ["DIRECT", str(direct)]})
    assert not result["ok"] and "d.txt" in result["cause"], result["cause"]


def _run(work: Path, script: str, config: str | None = None) -> subprocess.CompletedProcess:
    (work / "wf.swift").write_text(script)
    if config is not None:
        (work / "swift.conf").write_text(config)
    return subprocess.run([SWIFTNB, "wf.swift"], cwd=work, capture_output=True, text=True,
                          timeout=100, stdin=subprocess.DEVNULL)


COASTERS = """\
sites: cluster
site.cluster {
    execution {
        type: "coaster"
        jobManager: "local:local"
        options { maxJobs: 1, tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "01:00:00" }
    }
    workDirectory: "swiftwork"
    app.ALL { executable: "*" }
}
"""


@pytest.mark.parametrize("site", ["local", "coasters"])
def test_a_run_whose_app_links_its_output_into_the_job_directory(tmp_path, site):
    """The issue's case: once the job directory is gone, the output still has its data."""
    work = tmp_path / "wd"
    work.mkdir()
    script = ('type file;\napp (file o) make() { sh "-c" "echo real > real; '
              'ln -s $PWD/real $1" "sh" @o; }\nfile out <"out.txt">;\nout = make();\n')
    r = _run(work, script, COASTERS if site == "coasters" else None)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _regular(work / "out.txt") and (work / "out.txt").read_text() == "real\n"


# -- 2. an app that writes to its input ---------------------------------------------------

APPENDERS = {
    "append": 'echo more >> "$1"',
    "truncate": ': > "$1"',
    "open-read-write": 'echo XX 1<> "$1"',
}


@pytest.mark.parametrize("how", sorted(APPENDERS))
@pytest.mark.parametrize("where", ["relative", "absolute", "above"])
def test_an_app_writing_to_its_input_leaves_the_original_as_it_was(tmp_path, how, where):
    (tmp_path / "run").mkdir()
    original = {"relative": tmp_path / "run/in.txt", "absolute": tmp_path / "data/in.txt",
                "above": tmp_path / "in.txt"}[where]
    original.parent.mkdir(exist_ok=True)
    original.write_text("original\n")
    path = {"relative": "in.txt", "absolute": str(original), "above": "../in.txt"}[where]
    result = sh(tmp_path, APPENDERS[how] + '; cat "$1" > seen.txt', path,
                inputs=[path], outputs=["seen.txt"])
    assert result["ok"], result["message"]
    assert original.read_text() == "original\n"
    assert stat.S_IMODE(original.stat().st_mode) & 0o200  # the user's mode as it was


def test_an_app_writing_to_its_stdin_leaves_the_original_as_it_was(tmp_path):
    (tmp_path / "run").mkdir()
    original = tmp_path / "data.txt"
    original.write_text("original\n")
    result = sh(tmp_path, "echo more >> /proc/self/fd/0; cat > seen.txt",
                stdin=str(original), outputs=["seen.txt"])
    assert result["ok"], result["message"]
    assert original.read_text() == "original\n"
    assert (tmp_path / "run/seen.txt").read_text().startswith("original\n")  # its own copy


def test_an_app_that_writes_into_a_large_input_fails_and_the_next_reads_the_original(tmp_path):
    """Inputs are read-only to apps: the run's shared copy is 0444 (an ordinary user's app
    gets EACCES), and root, whom modes do not stop, gets a copy of its own that is checked
    after the job."""
    (tmp_path / "run").mkdir()
    big = tmp_path / "run/big.dat"
    data = b"x" * (files._COPY_LIMIT + 1)
    big.write_bytes(data)
    first = sh(tmp_path, 'echo more >> "$1"; wc -c < "$1" > n1', "big.dat",
               inputs=["big.dat"], outputs=["n1"])
    assert not first["ok"]
    assert "big.dat" in first["message"], first["message"]
    assert big.read_bytes() == data
    second = sh(tmp_path, 'wc -c < "$1" > n2', "big.dat", inputs=["big.dat"], outputs=["n2"])
    assert second["ok"], second["message"]
    assert int((tmp_path / "run/n2").read_text()) == len(data)  # a fresh copy


def test_an_input_directory_is_not_written_through(tmp_path):
    (tmp_path / "run/dir").mkdir(parents=True)
    (tmp_path / "run/dir/a.txt").write_text("a\n")
    os.symlink(tmp_path / "run/dir/a.txt", tmp_path / "run/dir/l.txt")
    result = sh(tmp_path, 'echo more >> "$1/a.txt"; echo more >> "$1/l.txt"; '
                'echo new > "$1/new.txt"', "dir", inputs=["dir"])
    assert result["ok"], result["message"]
    assert sorted(p.name for p in (tmp_path / "run/dir").iterdir()) == ["a.txt", "l.txt"]
    assert (tmp_path / "run/dir/a.txt").read_text() == "a\n"


@pytest.mark.parametrize("policy", ["DIRECT", "BROADCAST"])
def test_cdm_inputs_are_not_written_through(tmp_path, policy):
    gpfs = tmp_path / "gpfs"
    gpfs.mkdir()
    (tmp_path / "run").mkdir()
    source = (gpfs if policy == "DIRECT" else tmp_path / "run") / "x.txt"
    source.write_text("original\n")
    node = tmp_path / "node"
    directory = str(gpfs if policy == "DIRECT" else node)
    for _ in range(2):
        result = sh(tmp_path, 'cat x.txt > seen.txt; echo more >> x.txt', inputs=["x.txt"],
                    outputs=["seen.txt"], cdm={"x.txt": [policy, directory]})
        assert result["ok"], result["message"]
        assert source.read_text() == "original\n"
        # the next job reads the input as it was, not what this app appended
        assert (tmp_path / "run/seen.txt").read_text() == "original\n"


def test_a_run_whose_app_appends_to_its_inputs(tmp_path):
    """The real command, the local site: relative and absolute inputs stay as they were."""
    work = tmp_path / "wd"
    work.mkdir()
    (work / "in.txt").write_text("original\n")
    (tmp_path / "abs.txt").write_text("original\n")
    script = ('type file;\napp (file o) spoil(file a, file b) { sh "-c" '
              '"echo more >> $1; echo more >> $2; cat $1 $2 > $3" "sh" @a @b @o; }\n'
              f'file a <"in.txt">;\nfile b <"{tmp_path}/abs.txt">;\n'
              'file out <"out.txt">;\nout = spoil(a, b);\n')
    r = _run(work, script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "in.txt").read_text() == "original\n"
    assert (tmp_path / "abs.txt").read_text() == "original\n"
    assert (work / "out.txt").read_text() == "original\nmore\noriginal\nmore\n"


# -- 3. temporary names ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["o" * 255, "é" * 127, "x"])
def test_temporary_names_fit_name_max(tmp_path, name):
    tmp = files._temp_beside(str(tmp_path / name))
    assert len(os.fsencode(os.path.basename(tmp))) <= 255
    assert os.path.dirname(tmp) == str(tmp_path)
    open(tmp, "w").close()  # a name the file system takes


@pytest.fixture
def other_fs(tmp_path: Path):
    """A tmpfs: the run's directory on another file system than the job directory."""
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("a tmpfs mount needs root")
        pytest.skip("a tmpfs mount needs root")
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_long_output_name_moves_across_file_systems(tmp_path, other_fs):
    name = "o" * 240 + ".txt"
    spec = make_spec(tmp_path, base_dir=str(other_fs / "run"),
                     args=["-c", 'echo data > "$1"', "sh", name], outputs=[name])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert (other_fs / "run" / name).read_text() == "data\n"
    assert os.listdir(other_fs / "run") == [name]


# -- 4. the working directory removed under the app -------------------------------------

@pytest.mark.parametrize("which", ["job", "base"])
@pytest.mark.parametrize("code", [0, 1])
def test_a_removed_working_directory_is_not_the_apps_failure(tmp_path, which, code):
    target = '"$PWD"' if which == "job" else str(tmp_path / "run")
    result = sh(tmp_path, f'rm -rf {target}; exit {code}', outputs=["out.txt"])
    assert not result["ok"]
    assert result["kind"] == wrapper.KIND_STAGE_OUT, result["cause"]
    named = (str(tmp_path / "run") if which == "base"
             else str(tmp_path / "swiftwork/script-run001/jobs/a/app-k0qzzmvr"))
    assert named in result["cause"] and "removed" in result["cause"], result["cause"]
    assert "Application" not in result["cause"]


def test_an_output_copied_from_an_input_keeps_the_inputs_mode(tmp_path):
    """The copy an app gets has the user's mode and times: ``cp @i @o`` makes the output
    it made when inputs were links (a writable file, not a read-only one)."""
    (tmp_path / "run").mkdir()
    original = tmp_path / "run/in.txt"
    original.write_text("x\n")
    os.chmod(original, 0o640)
    os.utime(original, ns=(1_000_000_000, 1_000_000_000))
    result = sh(tmp_path, 'cp "$1" out.txt; stat -c %Y "$1" > t.txt', "in.txt",
                inputs=["in.txt"], outputs=["out.txt", "t.txt"])
    assert result["ok"], result["message"]
    assert stat.S_IMODE((tmp_path / "run/out.txt").stat().st_mode) == 0o640
    assert (tmp_path / "run/t.txt").read_text().strip() == "1"


def test_a_device_input_is_linked_not_copied(tmp_path):
    """A pipe or a device has no content to copy (``/dev/zero`` never ends): the app
    reads it where it is."""
    result = sh(tmp_path, 'head -c 3 "$1" | od -An -tx1 > seen.txt', "/dev/zero",
                inputs=["/dev/zero"], outputs=["seen.txt"])
    assert result["ok"], result["message"]
    assert (tmp_path / "run/seen.txt").read_text().split() == ["00", "00", "00"]
