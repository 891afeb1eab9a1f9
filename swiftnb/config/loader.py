"""``load_config``: Swift 0.96's search path, merged, validated, typed.

Order (later wins), as ``SwiftConfig.loadNormal`` had it:

1. ``[D]`` swiftnb's built-in ``etc/swift.conf`` (the embedded ``local`` site),
2. ``[S]`` ``$SWIFT_SITE_CONF`` if set,
3. ``[U]`` ``~/.swift/swift.conf`` if present,
4. ``[R]`` the legacy trio if given (swift.properties, sites.xml, tc.data, converted
   as swift-convert-config did), then ``-config FILE`` -- or ``./swift.conf`` when
   neither ``-config`` nor legacy files are given,
5. ``[C]`` command-line properties (``-sites a,b``, ``-lazyErrors`` ...).

Files are read with pyhocon (``hocon``), which with pyparsing takes some 70 ms to
import: a third of a ``swiftnb`` start.  A run that has no configuration file of its
own (only the built-in defaults and the command line) does not need it: the defaults
have no substitutions, so their resolved form is kept (``defaults``) and the command
line is merged into it as plain data, by the same rules.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from collections.abc import Mapping

from swiftnb.config import defaults, schema
from swiftnb.config.locate import Origin, Origins
from swiftnb.config.model import (
    AppConfig, Config, ConfigError, ExecutionConfig, FilesystemConfig, SiteConfig,
    split_path,
)
from swiftnb.config.types import ValueType
from swiftnb.config.validate import PROPERTY_NAMES, Checker, show
from swiftnb.nearest import close_matches

if TYPE_CHECKING:
    from swiftnb.config.hocon import Layer

DEFAULTS_FILE = defaults.DEFAULTS_FILE


def load_config(path: str | os.PathLike | None = None, *,
                properties: Mapping[str, Any] | None = None,
                sites_file: str | os.PathLike | None = None,
                tc_file: str | os.PathLike | None = None,
                properties_file: str | os.PathLike | None = None,
                env: Mapping[str, str] = os.environ,
                cwd: str | os.PathLike = ".",
                configpath: list[str] | None = None,
                options: Mapping[str, str] | None = None) -> Config:
    """Load the configuration of a run; raise ``ConfigError`` with every problem.

    ``path`` is ``-config FILE``; ``properties`` the command-line settings by swift.conf
    key (``{"sites": "a,b", "lazyErrors": "true"}``); ``sites_file``/``tc_file``/
    ``properties_file`` the legacy files; ``configpath`` (``-configpath a:b``) replaces
    the [D]..[R] search with the listed files; ``options`` the command-line option each
    property was given as (``{"executionRetries": "-execution.retries"}``), for messages.
    """
    cwd = os.fspath(cwd)
    if path is not None and properties_file is None and _is_properties(path, cwd):
        path, properties_file = None, path  # -config swift.properties (or cf), as in 0.95
    origins = Origins()
    layers: list[Layer] = []  # the files after the built-in defaults, in order
    files: list[tuple[str, str]] = []
    warnings: list[str] = []

    def add_file(file_path: str, display: str, tag: str) -> None:
        from swiftnb.config.hocon import parse_hocon_file

        layers.append(parse_hocon_file(file_path, display, tag, origins, env))
        files.append((tag, display))

    def resolve(p: str | os.PathLike) -> str:
        p = os.path.expanduser(os.fspath(p))
        return p if os.path.isabs(p) else os.path.join(cwd, p)

    if configpath is None and env.get("SWIFT_CONF_PATH"):
        configpath = [p for p in env["SWIFT_CONF_PATH"].split(os.pathsep) if p]
    with_defaults = not configpath
    if configpath:
        for entry in configpath:
            if not os.path.isfile(resolve(entry)):
                raise ConfigError(f"{entry}: configuration file not found")
            add_file(resolve(entry), os.fspath(entry), "[R]")
    else:
        origins.update(defaults.origins())
        files.append(("[D]", DEFAULTS_FILE))
        site_conf = env.get("SWIFT_SITE_CONF")
        if site_conf:
            if not os.path.isfile(resolve(site_conf)):
                raise ConfigError(f"{site_conf}: configuration file not found "
                                  "(named by $SWIFT_SITE_CONF)")
            add_file(resolve(site_conf), site_conf, "[S]")
        home = env.get("HOME") or os.path.expanduser("~")
        user_conf = os.path.join(home, ".swift", "swift.conf")
        if os.path.isfile(user_conf):
            add_file(user_conf, user_conf, "[U]")

    legacy = any(x is not None for x in (sites_file, tc_file, properties_file))
    if legacy:
        from swiftnb.config.legacy import legacy_layers

        for layer in legacy_layers(
                sites_file=os.fspath(sites_file) if sites_file is not None else None,
                tc_file=os.fspath(tc_file) if tc_file is not None else None,
                properties_file=os.fspath(properties_file)
                if properties_file is not None else None,
                resolve=resolve, origins=origins, env=env, warnings=warnings):
            layers.append(layer)
            files.append((layer.tag, layer.display))

    if path is not None:
        if not os.path.isfile(resolve(path)):
            raise ConfigError(f"{os.fspath(path)}: configuration file not found")
        add_file(resolve(path), os.fspath(path), "[R]")
    elif not legacy and not configpath and os.path.isfile(os.path.join(cwd, "swift.conf")):
        add_file(os.path.join(cwd, "swift.conf"), "swift.conf", "[R]")

    command_line = command_line_data(properties or {}, origins, options or {})
    files.append(("[C]", "<Command Line>"))
    resolved = defaults.resolved() if with_defaults and not layers else None
    if resolved is not None:
        raw = defaults.merge_plain(resolved, command_line)
    else:
        raw = _merge_layers(with_defaults, layers, command_line, env, origins)
    return build(raw, origins, files, warnings)


def _is_properties(path: str | os.PathLike, cwd: str) -> bool:
    """``-config FILE`` is a 0.94/0.95 properties file: named ``.properties``, or shaped
    as one (0.94's ``cf``)."""
    from swiftnb.config.legacy import is_properties_file

    name = os.path.expanduser(os.fspath(path))
    full = name if os.path.isabs(name) else os.path.join(cwd, name)
    return name.endswith(".properties") or (os.path.isfile(full) and
                                            is_properties_file(full))


def _merge_layers(with_defaults: bool, layers: list[Layer], command_line: dict[str, Any],
                  env: Mapping[str, str], origins: Origins) -> dict[str, Any]:
    """The defaults (when they take part), ``layers`` and the command line, merged and
    resolved by pyhocon."""
    from swiftnb.config.hocon import Layer, merge_and_resolve, tree_from_dict

    first = [defaults.layer(env)] if with_defaults else []
    last = Layer("[C]", "<Command Line>", tree_from_dict(command_line))
    return merge_and_resolve(first + layers + [last], env, origins)


def load_config_text(text: str, *, properties: Mapping[str, Any] | None = None,
                     env: Mapping[str, str] | None = None, cwd: str | os.PathLike = ".",
                     name: str = "swift.conf") -> Config:
    """A configuration from swift.conf text: built-in defaults, then ``text`` (as [R]
    ``name``), then ``properties``.  No other file is read (not ~/.swift/swift.conf),
    so it is what tests and notebooks want.  ``env`` defaults to an empty environment.
    """
    from swiftnb.config.hocon import parse_hocon_text

    env = {} if env is None else env
    origins = Origins()
    origins.update(defaults.origins())
    layers = [parse_hocon_text(text, os.path.join(os.fspath(cwd), name), name, "[R]",
                               origins, env)]
    files = [("[D]", DEFAULTS_FILE), ("[R]", name), ("[C]", "<Command Line>")]
    command_line = command_line_data(properties or {}, origins)
    raw = _merge_layers(True, layers, command_line, env, origins)
    return build(raw, origins, files, [])


def command_line_data(properties: Mapping[str, Any], origins: Origins,
                      options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The [C] layer as nested data: keys are swift.conf paths (legacy property names
    accepted); ``options`` names the option a key was given as, for messages."""
    data: dict[str, Any] = {}
    for key, value in properties.items():
        key = PROPERTY_NAMES.get(key, key)
        parts = split_path(key.lstrip("-"))
        node = schema.node_at(tuple(parts))
        if isinstance(node, ValueType) and isinstance(value, str):
            value = node.from_text(value)  # a bad one: validation names it
        target = data
        for part in parts[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise ConfigError(f"<Command Line>: {key}: conflicts with another option")
        target[parts[-1]] = value
        option = (options or {}).get(key)
        origins.set_leaf(tuple(parts), Origin(
            "[C]", f"<Command Line> {option}" if option else None))
    return data


# ------------------------------------------------------------------ building

def build(raw: dict[str, Any], origins: Origins, files: list[tuple[str, str]],
          warnings: list[str]) -> Config:
    checker = Checker(origins)
    checker.check(schema.GLOBAL, raw, ())
    config = Config(raw=raw, origins=origins, files=files, warnings=warnings)
    if checker.errors:
        raise ConfigError(checker.errors)

    def value(key: str) -> Any:
        node = schema.GLOBAL[key]
        if key in raw:
            return node.convert(raw[key])
        return schema.GLOBAL_DEFAULTS.get(key)

    config.staging = value("staging")
    config.lazy_errors = value("lazyErrors")
    config.execution_retries = value("executionRetries")
    config.caching_algorithm = value("cachingAlgorithm")
    config.job_submit_throttle = value("jobSubmitThrottle")
    config.host_job_submit_throttle = value("hostJobSubmitThrottle")
    config.file_transfers_throttle = value("fileTransfersThrottle")
    config.file_operations_throttle = value("fileOperationsThrottle")
    config.site_score_throttling_factor = value("siteScoreThrottlingFactor")
    config.keep_site_dir = value("keepSiteDir")
    config.log_provenance = value("logProvenance")
    config.replication_enabled = value("replicationEnabled")
    config.replication_min_queue_time = value("replicationMinQueueTime")
    config.replication_limit = value("replicationLimit")
    config.status_mode = value("statusMode")
    config.wrapper_parameter_mode = value("wrapperParameterMode")
    config.wrapper_invocation_mode = value("wrapperInvocationMode")
    config.CDM_broadcast_mode = value("CDMBroadcastMode")
    config.CDM_file = value("CDMFile")
    config.provider_staging_pin_swift_files = value("providerStagingPinSwiftFiles")
    config.ticker_date_format = value("tickerDateFormat")
    config.ticker_prefix = value("tickerPrefix")
    config.ticker_enabled = value("tickerEnabled")
    config.file_GC_enabled = value("fileGCEnabled")
    config.mapping_checker_enabled = value("mappingCheckerEnabled")
    config.host_name = value("hostName")
    config.TCP_port_range = value("TCPPortRange")
    config.always_transfer_wrapper_log = value("alwaysTransferWrapperLog")
    config.wrapper_log_per_job = value("wrapperLogPerJob")
    config.tracing_enabled = value("tracingEnabled")
    config.wrapper_staging_local_server = value("wrapperStagingLocalServer")
    config.max_foreach_threads = value("maxForeachThreads")
    config.max_threads = value("maxThreads")
    config.clustering_enabled = value("clusteringEnabled")
    config.clustering_min_time = value("clusteringMinTime")
    config.clustering_queue_delay = value("clusteringQueueDelay")
    config.site_selection_policy = value("siteSelectionPolicy")
    config.site_selection_options = dict(value("siteSelectionOptions") or {})
    config.memoize = value("memoize")
    config.memoize_store = value("memoizeStore")
    config.memoize_cache_size = value("memoizeCacheSize")
    config.monitor_listen_address = value("monitorListenAddress")

    errors: list[str] = []
    policy = config.site_selection_policy
    if policy not in schema.SITE_SELECTION_POLICIES and ":" not in policy:
        near = _near(policy, schema.SITE_SELECTION_POLICIES)
        errors.append(f"{checker.where(('siteSelectionPolicy',))}: siteSelectionPolicy: "
                      f"unknown policy {show(policy)}, expected one of "
                      f"{', '.join(schema.SITE_SELECTION_POLICIES)} or module:attribute"
                      + (f", did you mean {near}?" if near else ""))

    config.apps = {name: build_app(name, body, None)
                   for name, body in (raw.get("app") or {}).items()}
    selected = set(schema.GLOBAL["sites"].convert(raw["sites"])) if "sites" in raw else set()
    for name, body in (raw.get("site") or {}).items():
        site = build_site(name, body, config, checker, errors, name in selected)
        if site is not None:
            config.sites[name] = site

    if "sites" not in raw:
        errors.append(f"{checker.where(('sites',))}: sites: missing mandatory key "
                      "(the list of sites to run on)")
    else:
        config.selected_sites = schema.GLOBAL["sites"].convert(raw["sites"])
        if not config.selected_sites:
            errors.append(f"{checker.where(('sites',))}: sites: No sites enabled")
        for name in config.selected_sites:
            if name not in (raw.get("site") or {}):
                near = _near(name, list(raw.get("site") or {}))
                errors.append(f"{checker.where(('sites',))}: sites: unknown site "
                              f"{show(name)}" + (f", did you mean {near}?" if near else
                                                 " (no site." + name + " is defined)"))
    if errors:
        raise ConfigError(errors)
    return config


def _near(word: str, choices) -> str | None:
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return lowered[word.lower()]
    close = close_matches(word.lower(), list(lowered), cutoff=0.6)
    return lowered[close[0]] if close else None


def build_app(name: str, body: dict[str, Any], site: str | None) -> AppConfig:
    known = ("executable", "maxWallTime", "env", "options")
    return AppConfig(
        name=name,
        executable=str(body["executable"]) if body.get("executable") is not None else None,
        max_wall_time=schema.APP["maxWallTime"].convert(body["maxWallTime"])
        if "maxWallTime" in body else None,
        env={k: _string(v) for k, v in (body.get("env") or {}).items()},
        options=dict(body.get("options") or {}),
        attributes={k: v for k, v in body.items() if k not in known},
        site=site,
        raw=body,
    )


def _string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def build_site(name: str, body: dict[str, Any], config: Config, checker: Checker,
               errors: list[str], selected: bool = False) -> SiteConfig | None:
    path = ("site", name)
    execution = body.get("execution")
    if execution is None and set(body) <= {"app"} and not selected:
        config.warnings.append(f"{checker.where(path)}: site.{name}: only applications "
                               "are defined for this site (no execution); ignored")
        return None
    if not isinstance(execution, dict) or "type" not in execution:
        errors.append(f"{checker.where(path)}: site.{name}.execution.type: "
                      "missing mandatory key (the execution provider, e.g. local, "
                      "coaster, slurm, sim)")
        return None
    exec_type = str(execution["type"])
    # Swift's own types are known without reading every installed package's entry
    # points (that read is a tenth of a second of every run's start)
    if exec_type not in schema.EXECUTION_TYPES and exec_type not in _execution_types():
        near = _near(exec_type, _execution_types())
        errors.append(f"{checker.where(path + ('execution', 'type'))}: "
                      f"site.{name}.execution.type: unknown execution type "
                      f"{show(exec_type)}" + (f", did you mean {near}?" if near else ""))
    if "workDirectory" not in body and exec_type != "sim":
        errors.append(f"{checker.where(path)}: site.{name}.workDirectory: missing "
                      "mandatory key (the directory for job files on the site)")

    windows = "WINDOWS" in str(body.get("OS", "")).upper()
    staging = str(body.get("staging", config.staging))

    def site_value(key: str) -> Any:
        if key in body:
            return schema.SITE[key].convert(body[key])
        if windows and key in schema.WINDOWS_SITE_DEFAULTS:
            return schema.WINDOWS_SITE_DEFAULTS[key]
        if key == "wrapperScript" and staging in schema.PROVIDER_STAGING:
            return "_swiftwrap.staging"  # provider staging has its own wrapper
        return schema.SITE_DEFAULTS.get(key)

    fs = body.get("filesystem")
    site = SiteConfig(
        name=name,
        execution=ExecutionConfig(
            type=exec_type,
            URL=_opt_str(execution.get("URL")),
            job_manager=_opt_str(execution.get("jobManager")),
            options=dict(execution.get("options") or {}),
            credentials=dict(execution.get("credentials") or {}),
        ),
        filesystem=FilesystemConfig(type=str(fs.get("type", "local")), URL=_opt_str(
            fs.get("URL")), options=dict(fs.get("options") or {}))
        if isinstance(fs, dict) else None,
        staging=staging,
        work_directory=str(body.get("workDirectory", "swiftwork")),
        scratch=_opt_str(body.get("scratch")),
        max_parallel_tasks=site_value("maxParallelTasks"),
        initial_parallel_tasks=site_value("initialParallelTasks"),
        delay_base=site_value("delayBase"),
        max_submit_rate=site_value("maxSubmitRate"),
        OS=site_value("OS"),
        wrapper_interpreter=site_value("wrapperInterpreter"),
        wrapper_interpreter_options=site_value("wrapperInterpreterOptions"),
        wrapper_script=site_value("wrapperScript"),
        cleanup_command=site_value("cleanupCommand"),
        cleanup_command_options=site_value("cleanupCommandOptions"),
        keep_site_dir=site_value("keepSiteDir") if "keepSiteDir" in body
        else config.keep_site_dir,
        status_mode=site_value("statusMode") if "statusMode" in body
        else config.status_mode,
        wrapper_parameter_mode=site_value("wrapperParameterMode")
        if "wrapperParameterMode" in body else config.wrapper_parameter_mode,
        initial_score=site_value("initialScore"),
        job_throttle=site_value("jobThrottle"),
        resources=dict(body.get("resources") or {}),
        raw=body,
    )
    site.apps = {app: build_app(app, app_body, name)
                 for app, app_body in (body.get("app") or {}).items()}
    if site.initial_parallel_tasks > site.max_parallel_tasks:
        errors.append(f"{checker.where(path + ('initialParallelTasks',))}: "
                      f"site.{name}.initialParallelTasks: {site.initial_parallel_tasks} is "
                      f"more than maxParallelTasks ({site.max_parallel_tasks})")
    if exec_type in ("coaster", "coaster-persistent", "ssh", "ssh-cl", "gt2") and \
            not site.execution.URL and exec_type != "coaster":
        errors.append(f"{checker.where(path + ('execution',))}: site.{name}.execution.URL: "
                      f"missing mandatory key for execution type {exec_type} (the host)")
    return site


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _execution_types() -> tuple[str, ...]:
    """Swift's execution types, and those of providers installed through the
    ``swiftnb.providers`` entry points (a package may add its own)."""
    import importlib.metadata

    installed = {ep.name for ep in importlib.metadata.entry_points(group="swiftnb.providers")}
    return tuple(dict.fromkeys((*schema.EXECUTION_TYPES, *sorted(installed))))
