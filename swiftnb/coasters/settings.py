"""Coaster settings: a site's ``execution.options`` as the block planner needs them.

Swift 0.96 took these keys from swift.conf (``maxJobs``, ``tasksPerNode``,
``maxNodesPerJob``, ``maxJobTime`` ...) and renamed them to the coaster service's own names
(``slots``, ``jobsPerNode``, ``maxNodes``, ``maxtime`` ...).  Both spellings are accepted
here so that a swift.conf, a sites.xml profile and a notebook dict all work unchanged.
Defaults are those of the 0.96 coaster ``Settings`` class (reference 6.4), not the User
Guide's older figures (it says reserve 10 s; 0.96 used 60 s).

A few keys are swiftnb's own (the service was a separate Java process in Swift and had
them hard-wired): ``maxWorkerIdleTime``, ``suspendDelay``, ``planInterval``,
``listenAddress``, ``servicePort``, ``workerRetries``, ``secretFile``.

Two fields come from swift.conf's global keys, not from a site's options: ``host_name``
(``hostName``, what workers are told when ``internalHostName`` is not set) and
``port_range`` (``TCPPortRange``, where the service listens when ``servicePort`` is not
set); ``CoasterProvider.from_site`` fills them in.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from collections.abc import Callable
from typing import Any

from swiftnb.config.types import JAVA_INT_MAX, JAVA_INT_MIN, BadValue, in_range, time_to_seconds
from swiftnb.errors import SwiftnbError
from swiftnb.nearest import close_matches

__all__ = ["CoasterSettings", "CoasterConfigError", "format_hms"]

#: Integer.MAX_VALUE / 1024, the 0.96 code default for maxNodes ("unlimited").
UNLIMITED_NODES = 2097151


class CoasterConfigError(SwiftnbError, ValueError):
    """A bad coaster option; the message names the key and the nearest valid one."""


class _BadSetting(CoasterConfigError):
    """A value out of its range, found once the settings are made; ``key`` is its
    swift.conf name."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def format_hms(seconds: float) -> str:
    """``HH:MM:SS`` as Swift's WallTime.format("hms") printed it (hours may exceed 99)."""
    s = int(seconds)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


@dataclass(frozen=True, slots=True)
class CoasterSettings:
    """Everything the planner and the service read; times in seconds."""

    slots: int = 20                          # maxJobs: blocks at most
    jobs_per_node: int = 1                   # tasksPerNode: concurrent tasks per worker
    node_granularity: int = 1                # nodes per block are a multiple of this
    max_nodes: int = UNLIMITED_NODES         # maxNodesPerJob
    allocation_step_size: float = 0.1        # fraction of free slots used per round
    low_overallocation: float = 10.0         # overallocation of a 1 s task
    high_overallocation: float = 1.0         # ... of an infinitely long task
    overallocation_decay_factor: float = 0.001
    spread: float = 0.9                      # 0 = equal blocks, 1 = widest spread
    exponential_spread: float = 0.0          # != 0: exponential block sizes, base x
    reserve: int = 60                        # block tail usable only to finish tasks
    maxtime: int = 360 * 24 * 3600           # maxJobTime: block walltime cap
    parallelism: float = 0.01                # 0 = max parallelism .. 1 = tight packing
    default_walltime: int = 600              # a task without maxwalltime: 10 min
    max_worker_idle_time: float = 120.0      # idle block shuts down after this
    worker_start_timeout: float = 120.0      # a running block with no worker by then: given up
    suspend_delay: float = 30.0              # unused this long -> may be suspended
    plan_interval: float = 1.0               # seconds between planning rounds
    listen_address: str | None = None        # where the service listens (see bind_address)
    internal_hostname: str | None = None     # what workers connect to
    service_port: int = 0                    # 0 = any free port (in port_range, if set)
    host_name: str | None = None             # global hostName: this machine's name for workers
    port_range: tuple[int, int] | None = None  # global TCPPortRange
    worker_manager: str = "block"            # "passive": no blocks, workers started by hand
    secret_file: str | None = None           # passive: where the secret is written
    worker_retries: int = 3                  # re-queues of a task after lost workers
    prefetch: int | None = None              # tasks sent ahead to a worker; None = auto

    @classmethod
    def from_options(cls, options: dict[str, Any] | None, *, prefix: str = "execution.options",
                     origin: Callable[[str], str] | None = None) -> CoasterSettings:
        """Build from a swift.conf ``options`` block (swift.conf or coaster key names);
        ``origin(key)`` says where a key was written (``swift.conf:12``), for messages."""
        def located(key: str, exc: CoasterConfigError) -> CoasterConfigError:
            place = origin(key) if origin is not None else ""
            return CoasterConfigError(f"{place}: {exc}" if place else str(exc))

        values: dict[str, Any] = {}
        for key, raw in (options or {}).items():
            try:
                if key in _CHOICES and str(raw) not in _CHOICES[key]:
                    raise CoasterConfigError(
                        f"invalid value '{raw}' for property '{prefix}.{key}'. Expected one "
                        f"of {', '.join(_CHOICES[key])}")
                if key in _IGNORED:
                    continue
                target = _ALIASES.get(key)
                if target is None:
                    raise CoasterConfigError(_unknown(key, prefix))
                name, kind = target
                values[name] = _convert(raw, kind, f"{prefix}.{key}")
            except CoasterConfigError as exc:
                raise located(key, exc) from None
        settings = cls(**values)
        try:
            settings.validate(prefix)
        except _BadSetting as exc:
            field = _ALIASES.get(exc.key, (exc.key, ""))[0]
            written = next((k for k in (options or {}) if _ALIASES.get(k, ("", ""))[0] == field),
                           exc.key)
            raise located(written, exc) from None
        return settings

    def validate(self, prefix: str = "execution.options") -> None:
        def bad(key: str, why: str) -> CoasterConfigError:
            return _BadSetting(key, f"invalid value for property '{prefix}.{key}': {why}")

        if self.slots < 1:
            raise bad("maxJobs", "must be at least 1")
        if self.jobs_per_node < 1:
            raise bad("tasksPerNode", "must be at least 1")
        if self.node_granularity < 1:
            raise bad("nodeGranularity", "must be at least 1")
        if self.max_nodes < 1:
            raise bad("maxNodesPerJob", "must be at least 1")
        if not 0 < self.allocation_step_size <= 1:
            raise bad("allocationStepSize", "must be in (0, 1]")
        if not 0 <= self.spread <= 1:
            raise bad("spread", "must be in [0, 1]")
        if self.exponential_spread < 0 or self.exponential_spread == 1:
            raise bad("exponentialSpread", "must be 0 (off) or a positive base other than 1")
        if not 0 <= self.parallelism <= 1:
            raise bad("parallelism", "must be in [0, 1]")
        if self.reserve < 0:
            raise bad("reserve", "must not be negative")
        if self.prefetch is not None and self.prefetch < 0:
            raise bad("prefetch", "must not be negative")
        if self.plan_interval <= 0:
            raise bad("planInterval", "must be greater than 0")
        if self.worker_start_timeout <= 0:
            raise bad("workerStartTimeout", "must be greater than 0")
        if self.max_worker_idle_time <= 0:
            raise bad("maxWorkerIdleTime", "must be greater than 0")
        if self.default_walltime <= 0:
            raise bad("defaultWalltime", "must be greater than 0")
        if self.worker_retries < 0:
            raise bad("workerRetries", "must not be negative")
        if not 0 <= self.service_port <= 65535:
            raise bad("servicePort", "must be a port number (0 for any free one)")
        if self.maxtime <= self.reserve:
            raise bad("maxJobTime", f"must be longer than reserve ({self.reserve} s)")

    @property
    def max_block_walltime(self) -> int:
        """``maxtime - reserve``: the highest block height and the longest admissible task."""
        return self.maxtime - self.reserve

    @property
    def max_width(self) -> int:
        """``maxNodes * jobsPerNode``: the widest block, in worker slots."""
        return self.max_nodes * self.jobs_per_node

    @property
    def passive(self) -> bool:
        """``workerManager: "passive"``: the service starts no blocks."""
        return self.worker_manager == "passive"

    @property
    def bind_address(self) -> str:
        """``listenAddress``, else ``internalHostName``, else ``hostName``, else loopback
        only (the service listens where its workers are told to connect)."""
        return self.listen_address or self.internal_hostname or self.host_name or "127.0.0.1"

    @property
    def contact_host(self) -> str:
        """The address workers connect to: ``internalHostName``, else ``hostName``, else
        the bind address."""
        return self.internal_hostname or self.host_name or self.bind_address

    def as_options(self) -> dict[str, Any]:
        """swift.conf-style names and values (for the state panel and docs)."""
        out = {}
        for f in fields(self):
            out[_CANONICAL.get(f.name, f.name)] = getattr(self, f.name)
        return out


def _convert(raw: Any, kind: str, key: str) -> Any:
    """A written option value as its field's kind, by the configuration's own rules
    (swiftnb.config.types: Java's int for counts, Swift's Time for times)."""
    try:
        if kind == "time":
            return time_to_seconds(raw)
        if kind in ("int", "float"):
            return in_range(raw, JAVA_INT_MIN, JAVA_INT_MAX, integer=kind == "int")
        if kind == "str":
            return str(raw)
        if kind == "prefetch":
            if str(raw).strip().lower() == "auto":
                return None
            try:
                return in_range(raw, 0, JAVA_INT_MAX, integer=True)
            except BadValue:
                raise BadValue(f'expected an integer from 0 to {JAVA_INT_MAX} or "auto"') from None
    except BadValue as exc:
        shown = str(raw) if len(str(raw)) <= 40 else str(raw)[:37] + "..."
        raise CoasterConfigError(f"invalid value '{shown}' for property '{key}': {exc}") from None
    raise AssertionError(kind)


#: option name -> (field, kind).  swift.conf names first, then the coaster/profile names.
_ALIASES: dict[str, tuple[str, str]] = {
    "maxJobs": ("slots", "int"),
    "slots": ("slots", "int"),
    "tasksPerNode": ("jobs_per_node", "int"),
    "jobsPerNode": ("jobs_per_node", "int"),
    "workersPerNode": ("jobs_per_node", "int"),
    "nodeGranularity": ("node_granularity", "int"),
    "maxNodesPerJob": ("max_nodes", "int"),
    "maxNodes": ("max_nodes", "int"),
    "maxnodes": ("max_nodes", "int"),
    "allocationStepSize": ("allocation_step_size", "float"),
    "lowOverallocation": ("low_overallocation", "float"),
    "highOverallocation": ("high_overallocation", "float"),
    "overallocationDecayFactor": ("overallocation_decay_factor", "float"),
    "spread": ("spread", "float"),
    "exponentialSpread": ("exponential_spread", "float"),
    "reserve": ("reserve", "int"),
    "maxJobTime": ("maxtime", "time"),
    "maxtime": ("maxtime", "int"),
    "parallelism": ("parallelism", "float"),
    "maxWorkerIdleTime": ("max_worker_idle_time", "float"),
    "workerStartTimeout": ("worker_start_timeout", "float"),
    "suspendDelay": ("suspend_delay", "float"),
    "planInterval": ("plan_interval", "float"),
    "listenAddress": ("listen_address", "str"),
    "internalHostName": ("internal_hostname", "str"),
    "internalhostname": ("internal_hostname", "str"),
    "internalHostname": ("internal_hostname", "str"),   # swift-k's own test configurations
    "servicePort": ("service_port", "int"),
    "workerRetries": ("worker_retries", "int"),
    "prefetch": ("prefetch", "prefetch"),
    "defaultWalltime": ("default_walltime", "time"),
    "workerManager": ("worker_manager", "str"),
    "secretFile": ("secret_file", "str"),
}

_CANONICAL = {
    "slots": "maxJobs", "jobs_per_node": "tasksPerNode", "node_granularity": "nodeGranularity",
    "max_nodes": "maxNodesPerJob", "allocation_step_size": "allocationStepSize",
    "low_overallocation": "lowOverallocation", "high_overallocation": "highOverallocation",
    "overallocation_decay_factor": "overallocationDecayFactor", "spread": "spread",
    "exponential_spread": "exponentialSpread", "reserve": "reserve", "maxtime": "maxJobTime",
    "parallelism": "parallelism", "default_walltime": "defaultWalltime",
    "max_worker_idle_time": "maxWorkerIdleTime",
    "worker_start_timeout": "workerStartTimeout", "suspend_delay": "suspendDelay",
    "plan_interval": "planInterval", "listen_address": "listenAddress",
    "internal_hostname": "internalHostName", "service_port": "servicePort",
    "worker_retries": "workerRetries", "prefetch": "prefetch",
    "host_name": "hostName", "port_range": "TCPPortRange", "worker_manager": "workerManager",
    "secret_file": "secretFile",
}

#: Valid swift.conf options that matter only to batch block providers (queue, project,
#: worker logging...): accepted and kept by the site config, ignored by the planner.
_IGNORED = frozenset({
    "jobQueue", "jobProject", "userHomeOverride", "workerLoggingLevel",
    "workerLoggingDirectory", "softImage", "jobOptions",
    "remoteMonitorEnabled", "coresPerWorker",
})


#: options the planner does not read whose values are still one of a few
_CHOICES = {
    "workerLoggingLevel": ("NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"),
    "workerManager": ("block", "passive"),
}


def _unknown(key: str, prefix: str) -> str:
    names = sorted(set(_ALIASES) | _IGNORED)
    near = close_matches(key, names, cutoff=0.5)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    return f"unexpected property '{prefix}.{key}'{hint}"
