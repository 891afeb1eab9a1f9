"""LogFrame entity rules on small hand-made streams."""

from __future__ import annotations

import pandas as pd
from .synthetic import T0

from swiftnb.events import Event
from swiftnb.logs.frame import LogFrame


def _ev(t, kind, **fields):
    return Event(T0 + t, kind, fields)


def _job(jobid, taskids, statuses, *, thread="R"):
    out = [_ev(0, "JOB_INIT", jobid=jobid, tr="sh"),
           _ev(0, "THREAD_ASSOCIATION", jobid=jobid, thread=thread, host="local",
               replicationGroup=None)]
    for i, (taskid, codes) in enumerate(zip(taskids, statuses)):
        out.append(_ev(1 + i, "JOB_TASK", jobid=jobid, taskid=taskid, exec="sh", dir="d",
                       args=""))
        out += [_ev(1 + i + 0.1 * k, "TASK_STATUS_CHANGE", taskid=taskid, status=c)
                for k, c in enumerate(codes)]
    out.append(_ev(5, "JOB_END", jobid=jobid))  # an emitter that logs it even on failure
    return out


def test_outcome_from_last_attempt_when_threads_do_not_match():
    events = [_ev(0, "RUN_START")]
    events += _job("ok-1", ["urn:a"], [[8, 1, 2, 7]])
    events += _job("retried-2", ["urn:b", "urn:c"], [[8, 1, 2, 5], [8, 1, 2, 7]])
    events += _job("failed-3", ["urn:d", "urn:e"], [[8, 1, 2, 5], [8, 1, 5]])
    events += [_ev(6, "END_SUCCESS", thread="R-1", tr="sh"),
               _ev(6, "END_FAILURE", thread="R-3", tr="sh"), _ev(7, "RUN_FAILURE")]
    lf = LogFrame.from_events(events)
    jobs = lf.jobs
    assert jobs["outcome"].to_dict() == {"ok-1": "success", "retried-2": "success",
                                         "failed-3": "failure"}
    assert jobs["attempts"].to_dict() == {"ok-1": 1, "retried-2": 2, "failed-3": 2}
    assert jobs.loc["retried-2", "taskid"] == "urn:b"  # Tw and Tss use the first attempt
    tasks = lf.tasks
    assert tasks.loc["urn:b", "host"] == "local" and pd.isna(tasks.loc["urn:c", "host"])
    run = lf.run
    assert (run["jobs_succeeded"], run["jobs_failed"], run["tasks_failed"]) == (2, 1, 3)
    assert run["outcome"] == "failure"


def test_outcome_through_threads_as_swift_logged_them():
    events = _job("a-1", ["urn:a"], [[8, 1, 2, 5]], thread="R-2-1")
    events += _job("b-2", ["urn:b"], [[8, 1, 2, 7]], thread="R-2-2")
    events += [_ev(6, "END_FAILURE", thread="R-2-1", tr="sh"),
               _ev(6, "END_SUCCESS", thread="R-2-2", tr="sh")]
    assert LogFrame.from_events(events).jobs["outcome"].to_dict() == {
        "a-1": "failure", "b-2": "success"}


def test_empty_and_log_without_jobs():
    lf = LogFrame.from_events([])
    assert lf.run["njobs"] == 0 and len(lf.timings()) == 0 and len(lf.summary()) == 0
    lf = LogFrame.from_events([_ev(0, "RUN_START"), _ev(1, "RUN_SUCCESS")])
    assert lf.run["outcome"] == "success" and lf.run["ttc"] == 1.0
    assert list(lf.timings()["timing"]) == ["TTC"]


def test_plot_and_report_from_a_frame(tmp_path):
    from bokeh.model import Model
    from .synthetic import record

    lf = LogFrame.from_events(record())
    assert isinstance(lf.plot(), Model)
    path = lf.report(tmp_path / "r.html", title="synthetic run")
    text = open(path, encoding="utf-8").read()
    assert "synthetic run" in text and "Bokeh" in text


def test_aimes_line_end_rule():
    from swiftnb.logs.aimes import durations

    events = _job("j-1", ["urn:a", "urn:b"], [[8, 1], [8, 1]])
    events += [_ev(2, "TASK_STATUS_CHANGE", taskid="urn:a", status=5,
                    message="Walltime exceeded"),
               _ev(3, "TASK_STATUS_CHANGE", taskid="urn:b", status=16, workerid="B:-"),
               _ev(4, "TASK_STATUS_CHANGE", taskid="urn:b", status=2, workerid="B:W",
                   message="extra words"),
               _ev(5, "TASK_STATUS_CHANGE", taskid="urn:b", status=7)]
    lf = LogFrame.from_events(events)
    doc = durations(lf)
    a, b = doc["Tasks"]["a"], doc["Tasks"]["b"]
    assert a["states"]["failed"] is None  # "status=5 Walltime exceeded" does not end at 5
    assert lf.tasks.loc["urn:a", "failed"] == T0 + 2  # the general table counts it
    assert b["states"]["stage_in"] is None  # worker "B:-"
    assert b["states"]["active"] == int(T0 + 4)  # 2 and 16 may carry more
    assert b["workerid"] == "B:W" and b["blockid"] == "B"
    assert a["host"] == "local" and b["host"] is None  # only the first attempt has a host
    assert doc["Jobs"]["j-1"]["task_id"] == "a"
