"""The four real Swift 0.96 logs: every entity, every state, the counts."""

from __future__ import annotations

import pytest
from ._helpers import EXPERIMENTS, durations, log_text, metadata

from swiftnb.logs.aimes import AIMES_OFFSET
from swiftnb.logs.aimes import durations as aimes_durations


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_durations_json_reproduced_exactly(aimes_logs, name):
    ours = aimes_durations(aimes_logs[name], offset=AIMES_OFFSET)
    theirs = durations(name)
    for section in ("Session", "Blocks", "Workers", "Jobs", "Tasks"):
        assert set(ours[section]) == set(theirs[section]), section
        for key, value in theirs[section].items():
            assert ours[section][key] == value, (section, key)
    assert ours == theirs


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_counts_match_metadata_and_log(aimes_logs, name):
    lf = aimes_logs[name]
    n = metadata(name)["n_tasks"]
    run = lf.run
    assert run["njobs"] == run["ntasks"] == run["tasks_completed"] == n
    assert run["tasks_failed"] == 0 and run["outcome"] == "success"
    assert run["run_id"] == "run" + name[-3:]
    assert run["nblocks"] == run["nworkers"] == max(1, n // 16)
    assert run["hosts"] == ["stampede"]
    text = log_text(name)
    kinds = lf.events["kind"].value_counts()
    for tag in ("JOB_INIT", "JOB_TASK", "TASK_STATUS_CHANGE", "BLOCK_DONE", "WORKER_ACTIVE",
                "END_SUCCESS", "THREAD_ASSOCIATION"):
        assert kinds.get(tag, 0) == text.count(f" {tag} "), tag
    # every record: one per line that starts with a time stamp
    stamped = sum(1 for line in text.splitlines() if line[:2] == "20" and line[19:20] == ",")
    assert len(lf.events) == stamped


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_timings_of_sleep_900_bag(aimes_logs, name):
    t = aimes_logs[name].timings()
    n = metadata(name)["n_tasks"]
    counts = t.groupby("timing").size()
    for timing in ("Tss", "Tse", "Tw", "Te", "Tso"):
        assert counts[timing] == n, timing
    assert counts["TTC"] == 1
    assert counts["Tq"] == counts["Ta"] == counts["Tb"] == counts["Twe"] == max(1, n // 16)
    te = t[t["timing"] == "Te"]["duration"]
    assert te.between(900, 905).all()  # sleep 900 plus a little staging
    assert (t["duration"] > -1).all()  # times may run slightly backwards, never much


def test_entities_and_states_of_the_8_task_run(aimes_logs):
    lf = aimes_logs["stampede-exp-020"]
    job = lf.jobs.loc["sleep-fjrourkm"]
    assert job["host"] == "stampede" and job["tr"] == "sleep" and job["attempts"] == 1
    assert job["outcome"] == "success"
    task = lf.tasks.loc["urn:" + durations("stampede-exp-020")["Jobs"]["sleep-fjrourkm"]["task_id"]]
    assert task["jobid"] == "sleep-fjrourkm"
    assert task["workerid"] == "0124-5309490-000000:000000"
    for state in ("submitting", "submitted", "stage_in", "active", "stage_out", "completed"):
        assert task[state] > 0, state
    block = lf.blocks.loc["0124-5309490-000000"]
    assert (block["cores"], block["coresPerWorker"], block["walltime"]) == ("16", "1", "1440")
    assert block["nodes"] == ["c401-101.stampede.tacc.utexas.edu"]
    worker = lf.workers.loc["0124-5309490-000000:000000"]
    assert worker["ntasks"] == 8 and worker["cores"] == "16"
    # UTC, not the original analysis' US Eastern reading
    assert lf.run["start"] == pytest.approx(1453694014.832)


def test_worker_with_unknown_id_has_no_aimes_stage_in(aimes_logs):
    lf = aimes_logs["stampede-exp-019"]
    odd = lf.events[(lf.events["kind"] == "TASK_STATUS_CHANGE")
                    & lf.events["workerid"].fillna("").str.endswith(":-")]
    assert len(odd) == 3
    from swiftnb.logs.aimes import durations as d

    doc = d(lf)
    for taskid in odd["taskid"]:
        assert doc["Tasks"][taskid[4:]]["states"]["stage_in"] is None
        assert lf.tasks.loc[taskid, "stage_in"] > 0  # the general table keeps the event
