"""A job's record in ``RUNDIR/SCRIPT-RUNID.d/JOBID-info``.

Swift copied the wrapper log of every failed job there (and of every job with
``alwaysTransferWrapperLog``), so the evidence outlives the job directory, on whatever
machine the job ran.  Every provider writes it through :func:`write_info`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from swiftnb.engine.task import TaskResult
from swiftnb.events import TaskStatus
from swiftnb.execution.outcome import result_from_dict
from swiftnb.execution.wrapper import format_arguments
from swiftnb.scheduling.provider import StatusReporter

__all__ = ["InfoWriter"]


class InfoWriter:
    """Writes the ``-info`` records of one run (remembers the directories it made)."""

    def __init__(self) -> None:
        self._dirs: set[str] = set()

    def finish(self, run_dir: str, spec: Mapping[str, Any], result: Mapping[str, Any],
               attempt: StatusReporter, *, site: str, counts: dict[str, int],
               always: bool = False) -> TaskResult:
        """An attempt's end as the wrapper reported it, the same on every site that runs
        the wrapper far away: COMPLETED, or FAILED with its cause; the ``-info`` record of
        a failure (of a success too with alwaysTransferWrapperLog); the site's counts."""
        outcome = result_from_dict(result, site)
        if outcome.ok:
            counts["completed"] += 1
            attempt.status(TaskStatus.COMPLETED)
            if always:
                self.write(run_dir, spec, result)
        else:
            counts["failed"] += 1
            self.write(run_dir, spec, result)
            attempt.status(TaskStatus.FAILED, message=result.get("cause") or outcome.message)
        return outcome

    def write(self, run_dir: str, spec: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """The record of one attempt (``spec`` as the wrapper ran it, ``result`` its end);
        a failure to write it is not the job's failure."""
        try:
            info_dir = os.path.join(run_dir, f"{spec['site_run']}.d")
            if info_dir not in self._dirs:
                os.makedirs(info_dir, exist_ok=True)
                self._dirs.add(info_dir)
            jobid = spec["jobid"]
            name = jobid if not spec.get("attempt") else f"{jobid}-{spec['attempt']}"
            lines = [
                f"JOBID={jobid}", f"HOST={spec.get('site')}", f"DIR={result.get('directory')}",
                f"EXEC={spec.get('executable')}",
                f"ARGS={format_arguments(spec.get('args') or [])}",
                f"STDIN={spec.get('stdin') or ''}", f"STDOUT={spec.get('stdout') or ''}",
                f"STDERR={spec.get('stderr') or ''}",
                f"INF={'|'.join(spec.get('inputs') or [])}",
                f"OUTF={'|'.join(spec.get('outputs') or [])}",
            ]
            lines += [f"CDM={action}" for action in result.get("cdm_actions") or ()]
            if result.get("extra_info") is not None:  # env.SWIFT_EXTRA_INFO's output
                lines.append(f"EXTRAINFO={result['extra_info']}")
            text = ("\n".join(lines) + f"\nEXIT_CODE={result.get('exit_code')}\n\n"
                    f"{result.get('message', '')}\n"
                    f"\n--- stdout (tail) ---\n{result.get('stdout_tail', '')}\n"
                    f"--- stderr (tail) ---\n{result.get('stderr_tail', '')}\n")
            # os-level: one of these per job with alwaysTransferWrapperLog, on a busy run
            fd = os.open(os.path.join(info_dir, f"{name}-info"),
                         os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
            try:
                os.write(fd, text.encode("utf-8", "replace"))
            finally:
                os.close(fd)
        except OSError:
            pass
