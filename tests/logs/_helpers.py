"""Shared data of the log tests: the real Swift 0.96 AIMES logs and their derived
durations (tests/data/aimes)."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "aimes"
EXPERIMENTS = ["stampede-exp-017", "stampede-exp-018", "stampede-exp-019", "stampede-exp-020"]
#: experiment -> (tasks, blocks) from metadata.json and the log
SMALL = ["stampede-exp-020", "stampede-exp-017"]


def log_text(name: str) -> str:
    return bz2.decompress((DATA / name / "swift.log.bz2").read_bytes()).decode()


def metadata(name: str) -> dict:
    text = (DATA / name / "metadata.json").read_text()
    # the file is not valid JSON ("cores": {[32, 1]}); n_tasks is all we need
    return {"n_tasks": int(text.split('"n_tasks":')[1].split(",")[0])}


def durations(name: str) -> dict:
    return json.loads((DATA / name / "durations.json").read_text())
