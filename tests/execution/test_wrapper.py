"""The job wrapper on real processes and files: staging, redirection, outputs, failures."""

from __future__ import annotations

import os

import pytest

from swiftnb.remote import wrapper

pytestmark = pytest.mark.timeout(30)

ODD = "in put;'\"x.txt"


def make_spec(base, **kw):
    spec = {
        "jobid": "cat-k0qzzmvr",
        "tr": "cat",
        "executable": None,
        "args": [],
        "base_dir": str(base),
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
    return spec


def test_odd_file_names_are_single_argv_words(tmp_path):
    (tmp_path / ODD).write_text("hello\n")
    out = "out; rm -rf 'x' \"y\".txt"
    spec = make_spec(tmp_path, args=[ODD], inputs=[ODD], stdout=out, outputs=[out])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert (tmp_path / out).read_text() == "hello\n"
    # the job directory is gone, the site run directory stays for the provider to remove
    assert not (tmp_path / "swiftwork/script-run001/jobs/c/cat-k0qzzmvr").exists()


def test_inputs_in_subdirectories_are_linked_at_the_same_relative_path(tmp_path):
    (tmp_path / "data" / "deep").mkdir(parents=True)
    (tmp_path / "data/deep/a.txt").write_text("A")
    spec = make_spec(tmp_path, tr="sh", args=["-c", "cat data/deep/a.txt > res/o.txt; pwd > res/where"],
                     inputs=["data/deep/a.txt"], outputs=["res/o.txt", "res/where"])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert (tmp_path / "res/o.txt").read_text() == "A"
    where = (tmp_path / "res/where").read_text().strip()
    assert where == str(tmp_path / "swiftwork/script-run001/jobs/c/cat-k0qzzmvr")


def test_absolute_input_paths_are_used_as_they_are(tmp_path):
    src = tmp_path / "elsewhere.txt"
    src.write_text("abs\n")
    spec = make_spec(tmp_path, args=[str(src)], inputs=[str(src)], stdout="o.txt", outputs=["o.txt"])
    assert wrapper.run_job(spec)["ok"]
    assert (tmp_path / "o.txt").read_text() == "abs\n"


def test_stdin_redirect(tmp_path):
    (tmp_path / "in.txt").write_text("from stdin\n")
    spec = make_spec(tmp_path, stdin="in.txt", inputs=["in.txt"], stdout="o.txt", outputs=["o.txt"])
    assert wrapper.run_job(spec)["ok"]
    assert (tmp_path / "o.txt").read_text() == "from stdin\n"


def test_failure_message_has_command_exit_code_and_stderr_tail(tmp_path):
    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo some output; echo bad thing >&2; exit 3"],
                     outputs=["o.txt"])
    result = wrapper.run_job(spec)
    assert not result["ok"]
    assert result["exit_code"] == 3
    msg = result["message"]
    assert msg.startswith("Exception in sh:\n    Arguments: [-c, echo some output; echo bad thing >&2; exit 3]\n")
    assert "    Host: local\n" in msg
    assert "    Directory: script-run001/jobs/c/cat-k0qzzmvr\n" in msg
    assert "    stderr.txt: bad thing\n" in msg
    assert "    stdout.txt: some output\n" in msg
    assert msg.endswith("failed with an exit code of 3")
    assert "Caused by: Application " in msg
    assert not (tmp_path / "o.txt").exists()


def test_missing_output_fails_and_no_partial_outputs_appear(tmp_path):
    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo partial > a.txt"], outputs=["a.txt", "b.txt"])
    result = wrapper.run_job(spec)
    assert not result["ok"]
    assert result["message"].endswith(
        "Caused by: The following output files were not created by the application: b.txt")
    assert not (tmp_path / "a.txt").exists()
    assert not (tmp_path / "b.txt").exists()


def test_failing_app_leaves_no_partial_output(tmp_path):
    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo half > o.txt; exit 1"], stdout="s.txt",
                     outputs=["o.txt", "s.txt"])
    assert not wrapper.run_job(spec)["ok"]
    assert not (tmp_path / "o.txt").exists()
    assert not (tmp_path / "s.txt").exists()


def test_executable_not_found(tmp_path):
    result = wrapper.run_job(make_spec(tmp_path, tr="no-such-program-xyz"))
    assert not result["ok"]
    assert result["cause"] == "Cannot find executable no-such-program-xyz on site system path"


def test_executable_without_x_bit_is_not_retryable(tmp_path):
    script = tmp_path / "tool.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    result = wrapper.run_job(make_spec(tmp_path, tr="tool", executable=str(script)))
    assert not result["ok"]
    assert result["cause"] == f"The executable {script} does not have the executable bit set"
    assert result["retryable"] is False


def test_relative_executable_path_resolves_against_the_base_dir(tmp_path):
    script = tmp_path / "bin" / "tool.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho tool \"$@\"\n")
    script.chmod(0o755)
    spec = make_spec(tmp_path, tr="tool", executable="bin/tool.sh", args=["a b"], stdout="o.txt",
                     outputs=["o.txt"])
    assert wrapper.run_job(spec)["ok"]
    assert (tmp_path / "o.txt").read_text() == "tool a b\n"


def test_keep_site_dir_keeps_the_job_directory_and_retries_get_their_own(tmp_path):
    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo x > o.txt"], outputs=["o.txt"], keep=True,
                     attempt=1)
    assert wrapper.run_job(spec)["ok"]
    assert (tmp_path / "swiftwork/script-run001/jobs/c/cat-k0qzzmvr-1").is_dir()


def test_env_is_passed(tmp_path):
    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo $SWIFTNB_T > o.txt"], outputs=["o.txt"],
                     env={"SWIFTNB_T": "v1"})
    assert wrapper.run_job(spec)["ok"]
    assert (tmp_path / "o.txt").read_text() == "v1\n"


def test_walltime_kills_the_app(tmp_path):
    spec = make_spec(tmp_path, tr="sleep", args=["20"], walltime=0.3)
    result = wrapper.run_job(spec)
    assert not result["ok"]
    assert "walltime" in result["cause"]


def test_failure_message_ends_with_the_script_position(tmp_path):
    spec = make_spec(tmp_path, tr="false", source="wf.swift:12:5")
    message = wrapper.run_job(spec)["message"]
    assert message.splitlines()[-2].startswith("Caused by: Application ")
    assert message.endswith("\n\tat wf.swift:12:5")


def test_output_directory_removed_between_jobs_is_made_again(tmp_path):
    import shutil as _shutil

    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo 1 > res/a.txt"], outputs=["res/a.txt"])
    assert wrapper.run_job(spec)["ok"]
    _shutil.rmtree(tmp_path / "res")
    spec = make_spec(tmp_path, jobid="sh-2", tr="sh", args=["-c", "echo 2 > res/b.txt"],
                     outputs=["res/b.txt"])
    assert wrapper.run_job(spec)["ok"]
    assert (tmp_path / "res/b.txt").read_text() == "2\n"


def test_scratch_puts_the_job_there_and_copies_inputs(tmp_path):
    (tmp_path / "in.txt").write_text("x\n")
    scratch = tmp_path / "scratch"
    spec = make_spec(tmp_path, tr="sh", args=["-c", "test ! -L in.txt && pwd > where && cat in.txt > o.txt"],
                     inputs=["in.txt"], outputs=["o.txt", "where"], scratch=str(scratch))
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert (tmp_path / "where").read_text().strip().startswith(str(scratch))
    assert (tmp_path / "o.txt").read_text() == "x\n"


def test_two_jobs_with_the_same_jobid_at_once_do_not_disturb_each_other(tmp_path):
    import subprocess as sp

    first = wrapper.prepare(make_spec(tmp_path, tr="sh", args=["-c", "sleep 0.3; echo one > a.txt"],
                                      outputs=["a.txt"]))
    proc = sp.Popen(first.argv, **first.popen_kwargs())
    first.close_streams()
    second = make_spec(tmp_path, tr="sh", args=["-c", "echo two > b.txt"], outputs=["b.txt"])
    result2 = wrapper.run_job(second)
    result1 = first.finish(proc.wait())
    assert result1["ok"], result1["message"]
    assert result2["ok"], result2["message"]
    assert result2["directory"].endswith("cat-k0qzzmvr.2")
    assert (tmp_path / "a.txt").read_text() == "one\n" and (tmp_path / "b.txt").read_text() == "two\n"


# -- dynamic outputs (Task.output_globs) ------------------------------------------------

GEN = "mkdir -p outs; for i in 0 1 2; do echo test$i > outs/foo000$i.out; done; echo x > outs/skip.txt"


def test_dynamic_outputs_matching_the_globs_are_brought_back(tmp_path):
    spec = make_spec(tmp_path, tr="bash", args=["-c", GEN], output_globs=["outs/*.out"])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert sorted(p.name for p in (tmp_path / "outs").iterdir()) == [
        "foo0000.out", "foo0001.out", "foo0002.out"]
    assert (tmp_path / "outs/foo0002.out").read_text() == "test2\n"
    assert not (tmp_path / "swiftwork/script-run001/jobs/c/cat-k0qzzmvr").exists()


def test_dynamic_outputs_are_left_in_place_when_the_app_fails(tmp_path):
    spec = make_spec(tmp_path, tr="bash", args=["-c", GEN + "; exit 3"], output_globs=["outs/*.out"])
    result = wrapper.run_job(spec)
    assert not result["ok"] and result["exit_code"] == 3
    assert not (tmp_path / "outs").exists()


def test_dynamic_outputs_need_no_file_and_their_directory_exists_for_the_app(tmp_path):
    # no mkdir: the literal directory of the glob is there, as for declared outputs
    spec = make_spec(tmp_path, tr="bash", args=["-c", "test -d outs && ls -A outs | wc -l"],
                     stdout="n.txt", outputs=["n.txt"], output_globs=["outs/*.out"])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert (tmp_path / "n.txt").read_text().strip() == "0"
    assert not (tmp_path / "outs").exists()


def test_dynamic_outputs_with_double_star_and_question_mark(tmp_path):
    script = "mkdir -p r/a/b r/c; echo 1 > r/x1.dat; echo 2 > r/a/b/x2.dat; echo 3 > r/c/xx3.dat"
    spec = make_spec(tmp_path, tr="bash", args=["-c", script], output_globs=["r/**/x?.dat"])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert (tmp_path / "r/x1.dat").read_text() == "1\n"
    assert (tmp_path / "r/a/b/x2.dat").read_text() == "2\n"
    assert not (tmp_path / "r/c/xx3.dat").exists()


def test_staged_inputs_matching_the_glob_are_not_moved_back(tmp_path):
    (tmp_path / "outs").mkdir()
    (tmp_path / "outs/in.out").write_text("original\n")
    for scratch in (None, str(tmp_path / "scratch")):
        spec = make_spec(tmp_path, tr="bash", args=["-c", "cat outs/in.out > outs/new.out"],
                         inputs=["outs/in.out"], output_globs=["outs/*.out"], scratch=scratch)
        result = wrapper.run_job(spec)
        assert result["ok"], result["message"]
        assert (tmp_path / "outs/in.out").read_text() == "original\n"
        assert not (tmp_path / "outs/in.out").is_symlink()
        assert (tmp_path / "outs/new.out").read_text() == "original\n"


def test_dynamic_outputs_and_a_declared_output_overlapping(tmp_path):
    spec = make_spec(tmp_path, tr="bash", args=["-c", GEN], outputs=["outs/foo0001.out"],
                     output_globs=["outs/*.out", "outs/foo*.out"])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert len(list((tmp_path / "outs").iterdir())) == 3


def test_globs_outside_the_job_directory_are_ignored(tmp_path):
    (tmp_path / "keep.out").write_text("k")
    assert wrapper.glob_files(str(tmp_path), "../*.out") == []
    assert wrapper.glob_files(str(tmp_path), str(tmp_path / "*.out")) == []
    assert wrapper.glob_files(str(tmp_path), "*.out") == ["keep.out"]


def test_spec_from_task_carries_the_output_globs(tmp_path):
    from swiftnb.engine.task import Task

    task = Task(jobid="gen-1", tr="gen", args=[], base_dir=str(tmp_path), run_dir=str(tmp_path / "run001"))
    task.output_globs = ["outs/*.out"]
    assert wrapper.spec_from_task(task)["output_globs"] == ["outs/*.out"]


# -- spare job directories and streams captured beside the job directory -----------------

JOBS = "swiftwork/script-run001/jobs"


def test_an_empty_job_directory_is_reused_by_the_next_job(tmp_path):
    spares = wrapper.SpareDirs()
    first = wrapper.prepare(make_spec(tmp_path, jobid="a-1", tr="true"), spares)
    inode = os.stat(first.dir).st_ino
    first.finish(0)
    assert len(spares) == 1 and os.path.isdir(first.dir)  # kept, empty, for the next job
    second = wrapper.prepare(make_spec(tmp_path, jobid="b-2", tr="true"), spares)
    assert second.dir.endswith(f"{JOBS}/b/b-2")
    assert os.stat(second.dir).st_ino == inode and not os.path.exists(first.dir)
    assert len(spares) == 0
    second.finish(0)
    spares.clear()
    assert not os.path.exists(second.dir)


def test_a_job_directory_the_app_left_files_in_is_not_reused(tmp_path):
    spares = wrapper.SpareDirs()
    messy = make_spec(tmp_path, jobid="m-1", tr="sh", args=["-c", "echo x > stray; mkdir d"])
    import subprocess as sp

    job = wrapper.prepare(messy, spares)

    job.finish(sp.Popen(job.argv, **job.popen_kwargs()).wait())
    assert len(spares) == 0 and not os.path.exists(job.dir)
    # and a reused directory is empty when the next app looks at it
    clean = wrapper.prepare(make_spec(tmp_path, jobid="c-1", tr="true"), spares)
    clean.finish(0)
    assert len(spares) == 1
    listing = make_spec(tmp_path, jobid="l-1", tr="ls", args=["-A"], stdout="listing.txt",
                        outputs=["listing.txt"])
    job = wrapper.prepare(listing, spares)
    assert job.failure is None
    result = job.finish(sp.Popen(job.argv, **job.popen_kwargs()).wait())
    assert result["ok"], result["message"]
    assert (tmp_path / "listing.txt").read_text() == ""  # not even its own stdout


def test_staged_input_links_are_removed_and_the_directory_reused(tmp_path):
    spares = wrapper.SpareDirs()
    (tmp_path / "in.txt").write_text("data\n")
    spec = make_spec(tmp_path, jobid="k-1", args=["in.txt"], inputs=["in.txt"],
                     stdout="out/k.txt", outputs=["out/k.txt"])
    import subprocess as sp

    job = wrapper.prepare(spec, spares)
    result = job.finish(sp.Popen(job.argv, **job.popen_kwargs()).wait())
    assert result["ok"], result["message"]
    assert (tmp_path / "out/k.txt").read_text() == "data\n"
    assert (tmp_path / "in.txt").read_text() == "data\n"  # the link went, not the file
    assert len(spares) == 1


def _run(job):
    import subprocess as sp

    assert job.failure is None, job.failure
    result = job.finish(sp.Popen(job.argv, **job.popen_kwargs()).wait())
    assert result["ok"], result["message"]
    return result


def test_a_spare_keeps_the_input_directories_for_the_next_job_of_that_app(tmp_path):
    """``cat c/c1.txt`` leaves ``c/`` behind empty: the directory is kept with it, and
    the next ``cat`` of a file in ``c/`` gets it without a mkdir (same inode)."""
    spares = wrapper.SpareDirs()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "c1.txt").write_text("one\n")
    (tmp_path / "c" / "c2.txt").write_text("two\n")
    first = wrapper.prepare(make_spec(tmp_path, jobid="cat-1", args=["c/c1.txt"],
                                      inputs=["c/c1.txt"], stdout="o1.txt",
                                      outputs=["o1.txt"]), spares)
    inner = os.stat(os.path.join(first.dir, "c")).st_ino
    _run(first)
    assert len(spares) == 1 and os.listdir(first.dir) == ["c"]
    second = wrapper.prepare(make_spec(tmp_path, jobid="cat-2", args=["c/c2.txt"],
                                       inputs=["c/c2.txt"], stdout="o2.txt",
                                       outputs=["o2.txt"]), spares)
    assert os.stat(os.path.join(second.dir, "c")).st_ino == inner
    _run(second)
    assert (tmp_path / "o2.txt").read_text() == "two\n"
    assert (tmp_path / "c" / "c2.txt").read_text() == "two\n"
    spares.clear()
    assert not os.path.exists(second.dir)


def test_an_app_never_sees_a_directory_of_the_spare_it_did_not_need(tmp_path):
    """The same app with its input elsewhere next time: the spare's ``deep/er/`` goes
    before the app starts (it lists its directory: only its own input is there)."""
    spares = wrapper.SpareDirs()
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    _run(wrapper.prepare(make_spec(tmp_path, jobid="ls-1", tr="ls", args=["deep/er/a.txt"],
                                   inputs=["deep/er/a.txt"], stdout="l1.txt",
                                   outputs=["l1.txt"]), spares))
    assert len(spares) == 1
    _run(wrapper.prepare(make_spec(tmp_path, jobid="ls-2", tr="ls", args=["-AR"],
                                   inputs=["b.txt"], stdout="l2.txt", outputs=["l2.txt"]),
                         spares))
    assert (tmp_path / "l2.txt").read_text() == ".:\nb.txt\n"
    assert len(spares) == 1  # kept again, now of the second job's (empty) shape


def test_a_spare_never_replaces_an_existing_job_directory(tmp_path):
    spares = wrapper.SpareDirs()
    wrapper.prepare(make_spec(tmp_path, jobid="s-1", tr="true"), spares).finish(0)
    busy = wrapper.prepare(make_spec(tmp_path, jobid="x-1", tr="true"), None)  # empty, in use
    again = wrapper.prepare(make_spec(tmp_path, jobid="x-1", tr="true"), spares)
    assert again.dir == busy.dir + ".2"
    assert os.path.isdir(busy.dir) and os.path.isdir(again.dir)


def test_spares_of_a_removed_site_directory_are_skipped(tmp_path):
    import shutil

    spares = wrapper.SpareDirs()
    wrapper.prepare(make_spec(tmp_path, jobid="g-1", tr="true"), spares).finish(0)
    shutil.rmtree(tmp_path / "swiftwork")
    job = wrapper.prepare(make_spec(tmp_path, jobid="h-1", tr="true"), spares)
    assert job.failure is None and os.path.isdir(job.dir)


def test_a_mapped_stdout_is_captured_beside_the_job_directory(tmp_path):
    import subprocess as sp

    spec = make_spec(tmp_path, jobid="p-1", tr="sh", args=["-c", "echo out; echo err >&2; ls -A"],
                     stdout="deep/dir/p.txt", stderr="deep/dir/p.txt", outputs=["deep/dir/p.txt"])
    job = wrapper.prepare(spec)
    assert job.stdout_path == job.stderr_path == job.dir + ".stdout"
    result = job.finish(sp.Popen(job.argv, **job.popen_kwargs()).wait())
    assert result["ok"], result["message"]
    # both streams in the one file; the app's directory held no deep/ of ours
    assert sorted((tmp_path / "deep/dir/p.txt").read_text().split()) == ["err", "out"]
    assert not os.path.exists(job.dir + ".stdout")


def test_the_captured_stdout_of_a_failed_app_is_in_the_message_and_removed(tmp_path):
    spec = make_spec(tmp_path, jobid="f-1", tr="sh", args=["-c", "echo partial; exit 3"],
                     stdout="o/f.txt", outputs=["o/f.txt"])
    result = wrapper.run_job(spec)
    assert not result["ok"] and "partial" in result["message"]
    assert not (tmp_path / "o/f.txt").exists()
    jobs = tmp_path / JOBS / "f"
    assert not jobs.exists() or list(jobs.iterdir()) == []


def test_a_kept_site_directory_holds_no_spares(tmp_path):
    spares = wrapper.SpareDirs()
    wrapper.prepare(make_spec(tmp_path, jobid="q-1", tr="true"), spares).finish(0)
    kept = wrapper.prepare(make_spec(tmp_path, jobid="r-1", tr="true", keep=True), spares)
    kept.finish(0)
    spares.clear()
    assert os.listdir(tmp_path / JOBS / "r") == ["r-1"]
    assert not (tmp_path / JOBS / "q").exists() or os.listdir(tmp_path / JOBS / "q") == []


# -- failure kinds --------------------------------------------------------------------------

def test_a_success_has_no_kind(tmp_path):
    result = wrapper.run_job(make_spec(tmp_path, tr="true"))
    assert result["ok"] and result["kind"] is None and result["retryable"] is True
    assert result["canceled"] is False and result["cdm_actions"] == []


def _kind(result):
    assert not result["ok"]
    return result["kind"], result["retryable"]


def test_app_failures_are_app_exit(tmp_path):
    assert _kind(wrapper.run_job(make_spec(tmp_path, tr="false"))) == ("app-exit", True)
    missing = wrapper.run_job(make_spec(tmp_path, tr="true", outputs=["never.txt"]))
    assert _kind(missing) == ("app-exit", True)
    assert missing["cause"] == "The following output files were not created by the application: never.txt"


def test_programs_that_cannot_run_are_not_executable_and_never_retried(tmp_path):
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\necho hi\n")
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF\x00\x00 not really")
    garbage.chmod(0o755)
    (tmp_path / "adir").mkdir()
    cases = {
        "no-such-program-xyz": "Cannot find executable no-such-program-xyz on site system path",
        "bin/missing.sh": f"Cannot find executable bin/missing.sh: no such file (relative to {tmp_path})",
        str(plain): f"The executable {plain} does not have the executable bit set",
        str(tmp_path / "adir"): f"The executable {tmp_path / 'adir'} is a directory",
        str(garbage): f"Cannot execute {garbage}: Exec format error",
    }
    for executable, cause in cases.items():
        result = wrapper.run_job(make_spec(tmp_path, tr="t", executable=executable))
        assert result["cause"] == cause
        assert _kind(result) == ("not-executable", False), executable
        assert result["message"].startswith("Exception in t:\n")


def test_a_refused_fork_is_the_sites_trouble_and_retryable(tmp_path):
    import errno

    job = wrapper.prepare(make_spec(tmp_path, tr="true"))
    result = job.start_failed(OSError(errno.EAGAIN, "Resource temporarily unavailable"))
    assert _kind(result) == ("worker", True)
    assert result["cause"] == f"Cannot execute {job.argv[0]}: Resource temporarily unavailable"
    assert not os.path.exists(job.dir)


def test_stage_in_failures(tmp_path):
    missing = wrapper.run_job(make_spec(tmp_path, tr="true", inputs=["absent.txt"]))
    assert _kind(missing) == ("stage-in", True)
    assert missing["cause"] == "Could not locate input file: absent.txt"
    no_stdin = wrapper.run_job(make_spec(tmp_path, tr="cat", stdin="absent.txt"))
    assert _kind(no_stdin) == ("stage-in", True)
    (tmp_path / "blocker").write_text("a file, not a directory")
    no_dir = wrapper.run_job(make_spec(tmp_path, tr="true", work_dir=str(tmp_path / "blocker/w")))
    assert _kind(no_dir) == ("stage-in", True)
    assert no_dir["cause"].startswith("Could not create the job directory script-run001/jobs/c/")


def test_an_output_that_cannot_be_moved_is_stage_out(tmp_path):
    (tmp_path / "res").write_text("a file where the output directory should be")
    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo x > res/o.txt"], outputs=["res/o.txt"])
    job = wrapper.prepare(spec)
    assert job.failure is None
    import subprocess as sp

    result = job.finish(sp.Popen(job.argv, **job.popen_kwargs()).wait())
    assert _kind(result) == ("stage-out", True)
    assert result["cause"].startswith(f"Could not move output res/o.txt to {tmp_path}/res/o.txt: ")
    assert result["staged_out"] == []


def test_walltime_and_cancel_kinds(tmp_path):
    slow = wrapper.run_job(make_spec(tmp_path, tr="sleep", args=["20"], walltime=0.2))
    assert _kind(slow) == ("walltime", True)
    assert slow["cause"].endswith("sleep exceeded its walltime of 0.2 seconds and was killed")
    job = wrapper.prepare(make_spec(tmp_path, jobid="c-1", tr="true"))
    canceled = job.finish(None, canceled=True)
    assert _kind(canceled) == ("canceled", False) and canceled["canceled"] is True
    assert canceled["cause"] == "Canceled"


def test_failure_result_has_the_keys_of_a_job_result(tmp_path):
    job_result = wrapper.run_job(make_spec(tmp_path, tr="false"))
    own = wrapper.failure_result(wrapper.KIND_WORKER, "Coaster worker error: boom")
    assert set(own) == set(job_result)
    assert own["kind"] == "worker" and own["retryable"] is True and own["message"] == own["cause"]
    assert wrapper.failure_result(wrapper.KIND_CANCELED, "Canceled")["retryable"] is False
    assert set(wrapper.KINDS) == {"app-exit", "not-executable", "stage-in", "stage-out", "walltime",
                                  "canceled", "worker"}


def test_the_kinds_are_the_clients_failure_kinds():
    from swiftnb.engine import task

    client = getattr(task, "FailureKind", None)
    if client is None:
        pytest.skip("no FailureKind in this swiftnb yet")
    values = {k.value for k in client}
    assert set(wrapper.KINDS) <= values
    for kind in wrapper.KINDS:
        assert wrapper.failure_result(kind, "x")["retryable"] == client(kind).retryable


# -- staged_out: what a remote site fetches back ------------------------------------------------

def test_staged_out_lists_declared_stream_and_dynamic_outputs_in_order(tmp_path):
    absolute = tmp_path / "abs" / "a.txt"
    script = (f"echo 1 > b.txt; mkdir -p d; echo 2 > d/c.txt; echo 3 > {absolute}; "
              "echo out; echo err >&2; " + GEN)
    spec = make_spec(tmp_path, tr="bash", args=["-c", script],
                     outputs=["d/c.txt", "b.txt", str(absolute), "s/out.txt"],
                     stdout="s/out.txt", stderr="s/err.txt", output_globs=["outs/*.out"])
    result = wrapper.run_job(spec)
    assert result["ok"], result["message"]
    assert result["staged_out"] == ["d/c.txt", "b.txt", "s/out.txt", "s/err.txt",
                                    "outs/foo0000.out", "outs/foo0001.out", "outs/foo0002.out"]
    for rel in result["staged_out"]:
        assert (tmp_path / rel).is_file()
    assert absolute.read_text() == "3\n"  # written in place, not fetched


def test_staged_out_is_empty_when_the_app_fails(tmp_path):
    spec = make_spec(tmp_path, tr="sh", args=["-c", "echo 1 > b.txt; exit 4"], outputs=["b.txt"])
    assert wrapper.run_job(spec)["staged_out"] == []
