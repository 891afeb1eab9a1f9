"""The run handle as a live output: ``<RunHandle run001: running>`` under a ``%%swift``
cell becomes ``ok``, ``failed`` (with the errors, as the Swift kernel shows them) or
``canceled`` when the run ends.

A ``%%swift`` cell returns before its run ends, so a plain repr would say "running"
forever and a failing app's error would be printed under whichever cell happens to be
executing then.  Instead the handle is shown as a display with an id, and the run's done
callback updates that display in place (Jupyter routes the update to the cell that showed
it).  Registered for :class:`~swiftnb.runner.RunHandle` on IPython's display formatter by
``%load_ext swiftnb``, so ``run`` typed in a later cell is live too.
"""

from __future__ import annotations

import html

from IPython.display import DisplayHandle, display

from swiftnb.runner import RunHandle

__all__ = ["show_run", "show_dashboard", "status_text", "ended_text"]

#: what a failed run's error text starts with (the Swift kernel's wording)
FAILED = "Execution failed:"
CANCELED = "Execution canceled"


def status_text(run: RunHandle) -> str:
    return f"<RunHandle {run.runid}: {run.status()}>"


def ended_text(run: RunHandle) -> str:
    """The error text of an ended run ('' when it succeeded or is still going)."""
    status = run.status()
    if status == "canceled":
        return "\n".join(run.errors or [CANCELED])
    if status == "failed":
        return "\n".join([FAILED, *(run.errors or ["(no error message)"])])
    return ""


def _bundle(run: RunHandle) -> dict[str, str]:
    head = status_text(run)
    error = ended_text(run)
    plain = f"{head}\n{error}" if error else head
    page = f"<pre style='margin:0'>{html.escape(head)}</pre>"
    if error:
        page += ("<pre class='swiftnb-run-error' style='margin:2px 0;padding:2px 4px;"
                 "background:var(--jp-rendermime-error-background,#fdd)'>"
                 f"{html.escape(error)}</pre>")
    return {"text/plain": plain, "text/html": page}


def show_run(run: RunHandle) -> None:
    """Display ``run``'s status under the current cell and keep it up to date."""
    handle = display(_bundle(run), raw=True, display_id=True)
    if run.done:
        return
    assert isinstance(handle, DisplayHandle)

    def ended(done: RunHandle) -> None:
        handle.update(_bundle(done), raw=True)

    run.add_done_callback(ended)


def show_dashboard(run: RunHandle) -> None:
    """The live panels under the cell (``%%swift`` and the Swift kernel), when
    swiftnb.widgets is there."""
    try:
        from swiftnb.widgets import Dashboard
    except ImportError:
        return
    try:
        display(Dashboard(run))
    except Exception:  # noqa: BLE001  panels must never break a run
        pass
