"""The typed configuration every other part of swiftnb reads.

One model whatever the source: swift.conf (HOCON), the legacy sites.xml + tc.data +
swift.properties trio, or command-line properties.  Values are already converted
(throttles to ints, times to seconds) and validated; ``raw``/``get`` keep the merged
tree as written, and ``origin``/``dump`` say where each value came from.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

from swiftnb.config import schema
from swiftnb.config.locate import Origin, Origins
from swiftnb.config.types import THROTTLE_OFF
from swiftnb.errors import SwiftnbError


class ConfigError(SwiftnbError):
    """A configuration problem; ``str()`` is the text for people.

    Each line reads ``file:line: key: problem`` (with ``did you mean X?`` where a
    near valid key exists).  ``errors`` holds the individual lines.
    """

    def __init__(self, errors: str | list[str]) -> None:
        self.errors = [errors] if isinstance(errors, str) else sorted(errors, key=_by_place)
        super().__init__("\n".join(self.errors))


def _by_place(message: str) -> tuple[str, int]:
    """Sort key: file, then line, of a ``file:line: ...`` message."""
    import re

    match = re.match(r"(.*?):(\d+)[:]", message)
    return (match.group(1), int(match.group(2))) if match else (message, 0)


@dataclass
class AppConfig:
    """An application definition (``app.NAME`` or ``app.ALL``), global or per site."""

    name: str
    executable: str | None = "*"  # None: this definition only adds env/options
    max_wall_time: int | None = None  # seconds
    env: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)  # other keys: job attributes
    site: str | None = None  # None = global definition
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def executable_for(self, tr: str) -> str:
        """The program to run for app ``tr``: ``"*"`` means the app's own name."""
        return tr if self.executable in ("*", None) else self.executable

    def which(self, tr: str, path: str | None = None) -> str | None:
        """Local PATH lookup of ``executable_for(tr)`` (absolute paths returned as is)."""
        program = self.executable_for(tr)
        if os.path.isabs(program):
            return program
        return shutil.which(program, path=path)

    @property
    def max_wall_time_text(self) -> str | None:
        if self.max_wall_time is None:
            return None
        s = self.max_wall_time
        return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


@dataclass
class ExecutionConfig:
    type: str
    URL: str | None = None
    job_manager: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    credentials: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str | None:
        return self.URL

    @property
    def bootstrap(self) -> str | None:
        """For coasters, the provider that starts the service (``ssh-cl`` of ``ssh-cl:slurm``)."""
        if not self.job_manager or ":" not in self.job_manager:
            return None
        return self.job_manager.split(":", 1)[0]

    @property
    def lrm(self) -> str | None:
        """For coasters, the local resource manager of blocks (``slurm`` of ``ssh-cl:slurm``)."""
        if not self.job_manager:
            return None
        return self.job_manager.split(":")[-1]


@dataclass
class FilesystemConfig:
    type: str
    URL: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class SiteConfig:
    name: str
    execution: ExecutionConfig
    filesystem: FilesystemConfig | None = None
    staging: str = "swift"  # effective: the site's own, else the global value
    work_directory: str = "swiftwork"
    scratch: str | None = None
    max_parallel_tasks: int = 2
    initial_parallel_tasks: int = 2
    delay_base: float = 2.0
    max_submit_rate: float | None = None
    OS: str = "INTEL32::LINUX"
    wrapper_interpreter: str = "/bin/bash"
    wrapper_interpreter_options: list[str] = field(default_factory=list)
    wrapper_script: str = "_swiftwrap"
    cleanup_command: str = "/bin/rm"
    cleanup_command_options: list[str] = field(default_factory=lambda: ["-rf"])
    keep_site_dir: bool = False  # effective (site, else global)
    status_mode: str = "files"  # effective
    wrapper_parameter_mode: str = "args"  # effective
    initial_score: float | None = None  # from sites.xml karajan:initialScore
    job_throttle: float | None = None  # from sites.xml karajan:jobThrottle
    resources: dict[str, Any] = field(default_factory=dict)
    apps: dict[str, AppConfig] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def options(self) -> dict[str, Any]:
        """The raw ``execution.options`` (as written, validated)."""
        return self.execution.options

    @property
    def type(self) -> str:
        return self.execution.type


@dataclass
class Config:
    """The whole configuration of a run."""

    sites: dict[str, SiteConfig] = field(default_factory=dict)
    selected_sites: list[str] = field(default_factory=list)
    apps: dict[str, AppConfig] = field(default_factory=dict)  # global app.NAME / app.ALL
    staging: str = "swift"
    lazy_errors: bool = True
    execution_retries: int = 0
    caching_algorithm: str = "LRU"
    job_submit_throttle: int = 4
    host_job_submit_throttle: int = 2
    file_transfers_throttle: int = 4
    file_operations_throttle: int = 8
    site_score_throttling_factor: float = 0.2
    keep_site_dir: bool = False
    log_provenance: bool = False
    replication_enabled: bool = False
    replication_min_queue_time: int = 60
    replication_limit: int = 3
    status_mode: str = "files"
    wrapper_parameter_mode: str = "args"
    wrapper_invocation_mode: str = "absolute"
    CDM_broadcast_mode: str = "file"
    CDM_file: str = "fs.data"
    provider_staging_pin_swift_files: bool = False
    ticker_date_format: str | None = None
    ticker_prefix: str = "Progress: "
    ticker_enabled: bool = True
    file_GC_enabled: bool = True
    mapping_checker_enabled: bool = True
    host_name: str | None = None
    TCP_port_range: tuple[int, int] | None = (50000, 50100)
    always_transfer_wrapper_log: bool = True
    wrapper_log_per_job: bool = False
    tracing_enabled: bool = False
    wrapper_staging_local_server: str = "file://"
    max_foreach_threads: int = 16384
    max_threads: int = 1000000
    clustering_enabled: bool = False
    clustering_min_time: int = 60
    clustering_queue_delay: float = 4.0
    site_selection_policy: str = "weighted"
    site_selection_options: dict[str, Any] = field(default_factory=dict)
    memoize: bool = False
    memoize_store: str = ".swiftnb"
    memoize_cache_size: int = 1 << 30
    monitor_listen_address: str = "127.0.0.1"
    files: list[tuple[str, str]] = field(default_factory=list)  # (tag, path) loaded
    warnings: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    origins: Origins = field(default_factory=Origins, repr=False)

    def __repr__(self) -> str:
        sites = ", ".join(f"{name}:{site.execution.type}" for name, site in self.sites.items())
        return (f"Config(selected_sites={self.selected_sites!r}, sites=[{sites}], "
                f"files={[path for _, path in self.files]!r})")

    # -- lookups
    def get(self, path: str, default: Any = None) -> Any:
        """The merged raw value at a dotted path (``"site.local.workDirectory"``)."""
        node: Any = self.raw
        for part in split_path(path):
            if not isinstance(node, Mapping) or part not in node:
                return default
            node = node[part]
        return node

    def origin(self, path: str) -> str:
        """Where the value at ``path`` came from, as the dump annotates it.

        ``"[D] line 121"``, ``"[R] line 27"``, ``"[R] other.conf line 3"`` (included
        file), ``"[C]"`` (command line, or a value built from ``${env.X}``), or ``""``
        when the key is not set anywhere (a schema default).
        """
        found = self.origin_detail(path)
        return found.annotation() if found else ""

    def origin_detail(self, path: str) -> Origin | None:
        return self.origins.get(tuple(split_path(path)))

    def site(self, name: str) -> SiteConfig:
        return self.sites[name]

    @property
    def enabled_sites(self) -> list[SiteConfig]:
        return [self.sites[name] for name in self.selected_sites]

    def app_for(self, site_name: str, tr: str) -> AppConfig | None:
        """The definition of app ``tr`` on a site, by Swift's resolution order.

        ``site.S.app.TR``, then ``site.S.app.ALL``, then global ``app.TR``, then global
        ``app.ALL``: the first of these that names an ``executable`` gives it.  ``env``,
        ``options``, other attributes and ``maxWallTime`` are merged over the same
        levels, the more specific winning (Swift merged the global ``app.ALL`` into
        every app; swiftnb extends that to all four levels, so a site's ``app.ALL``
        can add an env var to a globally defined app).  ``None`` means the app is not
        available on the site (no level defines an executable).
        """
        site = self.sites.get(site_name)
        levels = [self.apps.get("ALL"), self.apps.get(tr)]
        if site is not None:
            levels += [site.apps.get("ALL"), site.apps.get(tr)]
        given = [level for level in levels if level is not None]
        found = next((level for level in reversed(given) if level.executable is not None),
                     None)
        if found is None:
            return None
        merged = AppConfig(name=tr, executable=found.executable, site=found.site,
                           raw=found.raw)
        for level in given:
            if level.max_wall_time is not None:
                merged.max_wall_time = level.max_wall_time
            merged.env.update(level.env)
            merged.options.update(level.options)
            merged.attributes.update(level.attributes)
        return merged

    def sites_for(self, tr: str) -> list[str]:
        """Selected sites on which app ``tr`` is available."""
        return [s for s in self.selected_sites if self.app_for(s, tr) is not None]

    def dump(self) -> str:
        """The SWIFT_CONFIGURATION block of swift.log (the lines after that tag).

        A log writer writes ``"SWIFT_CONFIGURATION \\n" + config.dump()`` as the
        message of a DEBUG ``Loader`` line, as Swift 0.96 did.
        """
        from swiftnb.config.dump import render

        return render(self)

    def to_swift_conf(self) -> str:
        """swift.conf text of everything not set by the built-in defaults (what
        swift-convert-config wrote for legacy files)."""
        from swiftnb.config.dump import render_swift_conf

        return render_swift_conf(self)

    def listconfig(self, full: bool = False) -> str:
        """``-listconfig files|full``: the files with their tags, and the tree."""
        lines = [f"{tag} {path}" for tag, path in self.files]
        if not full:
            return "\n".join(lines) + "\n"
        return self.dump()

    @property
    def throttle_off(self) -> int:
        return THROTTLE_OFF


def split_path(path: str) -> list[str]:
    """``a.b."c.d"`` -> ``["a", "b", "c.d"]``."""
    parts: list[str] = []
    current = ""
    quoted = False
    for ch in path:
        if ch == '"':
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p != ""]


__all__ = ["Config", "SiteConfig", "AppConfig", "ExecutionConfig", "FilesystemConfig",
           "ConfigError", "split_path", "schema"]
