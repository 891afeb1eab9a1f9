"""The pre-0.96 configuration files, converted as ``swift-convert-config`` did.

``sites.xml`` (the site catalog), ``tc.data`` (the transformation catalog) and
``swift.properties`` become layers of the same tree swift.conf produces, so they are
validated, typed and dumped the same way; each converted key keeps the file and line
it came from (``# [R] sites.xml line 12`` in the dump).
"""

from __future__ import annotations

import math
import os
import re
import xml.parsers.expat
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Mapping

from swiftnb.config import schema
from swiftnb.config.hocon import Layer, tree_from_dict
from swiftnb.config.locate import (
    MAX_LEGACY_BYTES, Origin, Origins, system_properties, text_problem,
)
from swiftnb.config.model import ConfigError
from swiftnb.config.types import BadValue, T, ValueType, seconds_to_time
from swiftnb.config.validate import PROPERTY_NAMES
from swiftnb.nearest import close_matches

# TScore constants of the site scheduler (reference 6.1): T = 100, B = 2 ln T / pi, C = 0.2
_T = 100.0
_B = 2 * math.log(_T) / math.pi
_C = 0.2


def tscore(score: float) -> float:
    return math.exp(_B * math.atan(_C * score))


class _Tree:
    """A nested dict being built, recording each key's origin as it is set."""

    def __init__(self, origins: Origins, file: str) -> None:
        self.data: dict[str, Any] = {}
        self.origins = origins
        self.file = file

    def set(self, path: tuple[str, ...], value: Any, line: int | None) -> None:
        # Dotted option names (pbs.aprun, mpi.processes) nest, as they do in HOCON;
        # site and application names are kept whole.
        split: list[str] = []
        for part in path:
            if "options" in split or "jobOptions" in split:
                split += [p for p in part.split(".") if p]
            else:
                split.append(part)
        path = tuple(split)
        node = self.data
        for part in path[:-1]:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = node[part] = {}
            node = nxt
        node[path[-1]] = typed(path, value)
        self.origins.set_leaf(path, Origin("[R]", self.file, line, primary=False))

    def has(self, path: tuple[str, ...]) -> bool:
        node: Any = self.data
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True


def typed(path: tuple[str, ...], value: Any) -> Any:
    """Convert a string from a legacy file to what the schema wants, if it can."""
    node = schema.node_at(path)
    if not isinstance(node, ValueType) or not isinstance(value, str):
        return value
    return node.from_text(value)  # a bad one: validation names it, with file and line


_BAD_NAME = re.compile(r'[\s"\\${}\[\],=;#/]')  # "/": pyhocon cannot hold it in a key


def _check_name(name: str, what: str, display: str, line: int) -> None:
    if not name or _BAD_NAME.search(name):
        raise ConfigError(f"{display}:{line}: {name!r}: not a valid {what} name "
                          "(no spaces, quotes or any of $ { } [ ] , = ; # /)")


# ------------------------------------------------------------------ sites.xml

@dataclass
class _Element:
    tag: str
    attrs: dict[str, str]
    line: int
    text: str = ""
    children: list[_Element] = field(default_factory=list)


def _parse_xml(path: str, display: str) -> _Element:
    parser = xml.parsers.expat.ParserCreate()
    stack: list[_Element] = []
    root: list[_Element] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        element = _Element(tag.split(":")[-1], attrs, parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(element)
        else:
            root.append(element)
        stack.append(element)

    def end(tag: str) -> None:
        stack.pop()

    def chars(data: str) -> None:
        if stack:
            stack[-1].text += data

    def entity(name: str, *_: object) -> None:
        # a site catalog has no use for entities, and nested ones expand to gigabytes
        raise ConfigError(f"{display}:{parser.CurrentLineNumber}: XML entity {name!r}: "
                          "a site catalog may not declare entities")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.EntityDeclHandler = entity
    try:
        if os.path.getsize(path) > MAX_LEGACY_BYTES:
            raise ConfigError(f"{display}: cannot read site catalog: too large for a "
                              f"configuration file (more than {MAX_LEGACY_BYTES} bytes)")
        with open(path, "rb") as handle:
            parser.ParseFile(handle)
    except OSError as exc:
        raise ConfigError(f"{display}: cannot read site catalog: {exc.strerror}") from None
    except xml.parsers.expat.ExpatError as exc:
        kind = guess_kind(text_problem(path)[0] or "")
        if kind not in (None, "sites.xml"):
            raise ConfigError(f"{display}: this is not a site catalog (sites.xml): it looks "
                              f"like {_KIND_HINT[kind]}") from None
        raise ConfigError(f"{display}:{exc.lineno}:{exc.offset + 1}: XML error: "
                          f"{xml.parsers.expat.ErrorString(exc.code)}") from None
    return root[0]


def _by_lower(*names: str) -> dict[str, str]:
    """Canonical names by their lower case: 0.96 read a profile key in any case."""
    return {name.lower(): name for name in names}


#: the coaster keys of the globus profile namespace: the canonical names in any case, and
#: 0.96's older spellings
_COASTER_GLOBUS = {
    **_by_lower("tasksPerNode", "lowOverallocation", "highOverallocation",
                "overallocationDecayFactor", "allocationStepSize", "nodeGranularity",
                "internalHostName", "remoteMonitorEnabled", "userHomeOverride",
                "workerLoggingLevel", "workerLoggingDirectory", "workerManager", "softImage",
                "spread", "reserve", "exponentialSpread"),
    "queue": "jobQueue", "project": "jobProject", "slots": "maxJobs",
    "maxnodes": "maxNodesPerJob", "jobspernode": "tasksPerNode",
}
_SWIFT_NS = _by_lower("wrapperInterpreter", "wrapperInterpreterOptions", "wrapperScript",
                      "cleanupCommand", "cleanupCommandOptions")
_KARAJAN_NS = {"delaybase": "delayBase", "maxsubmitrate": "maxSubmitRate",
               "status.mode": "statusMode"}
_EXEC_PROVIDERS = {"gt2": "gt2", "gt4": "gt2", "gt5": "gt2", "condor-g": "condor"}


def convert_sites_xml(path: str, display: str, origins: Origins,
                      warnings: list[str]) -> tuple[dict[str, Any], list[str], int]:
    """sites.xml -> (tree, pool handles in file order, line of the root element)."""
    root = _parse_xml(path, display)
    if root.tag not in ("config", "sites"):
        raise ConfigError(f"{display}:{root.line}: <{root.tag}>: expected the site catalog "
                          "root element <config>")
    tree = _Tree(origins, display)
    handles: list[str] = []
    for pool in root.children:
        if pool.tag != "pool":
            warnings.append(f"{display}:{pool.line}: <{pool.tag}> ignored (not a <pool>)")
            continue
        handle = pool.attrs.get("handle")
        if not handle:
            raise ConfigError(f"{display}:{pool.line}: <pool>: missing the handle attribute "
                              "(the site name)")
        _check_name(handle, "site", display, pool.line)
        handles.append(handle)
        _convert_pool(pool, handle, tree, display, warnings)
    return tree.data, handles, root.line


def _convert_pool(pool: _Element, name: str, tree: _Tree, display: str,
                  warnings: list[str]) -> None:
    site = ("site", name)
    if name == "local":  # replaces the built-in local site (swift-convert-config: null)
        tree.origins.set_null(site)
    has_fs = False
    exec_type = None
    job_throttle = initial_score = None
    profile_lines: dict[str, int] = {}
    if "sysinfo" in pool.attrs:
        tree.set(site + ("OS",), pool.attrs["sysinfo"], pool.line)
    for el in pool.children:
        tag, attrs, line = el.tag, el.attrs, el.line
        if tag == "execution":
            provider = attrs.get("provider", "local")
            exec_type = _EXEC_PROVIDERS.get(provider, provider)
            tree.set(site + ("execution", "type"), exec_type, line)
            url = attrs.get("url")
            if url and url != "none":
                tree.set(site + ("execution", "URL"), url, line)
            if attrs.get("jobmanager"):
                tree.set(site + ("execution", "jobManager"), attrs["jobmanager"], line)
        elif tag == "jobmanager":  # V1 syntax: GRAM2, or local://localhost
            url = attrs.get("url", "")
            if url.startswith("local://"):
                exec_type = "local"
                tree.set(site + ("execution", "type"), "local", line)
            else:
                exec_type = "gt2"
                host, _, manager = url.partition("/")
                tree.set(site + ("execution", "type"), "gt2", line)
                tree.set(site + ("execution", "URL"), host, line)
                if manager:
                    tree.set(site + ("execution", "jobManager"),
                             manager.replace("jobmanager-", "").upper(), line)
        elif tag in ("filesystem", "gridftp"):
            has_fs = True
            url = attrs.get("url", "")
            provider = attrs.get("provider") or (
                "local" if url.startswith("local://") or not url else
                "gsiftp" if tag == "gridftp" else "local")
            tree.set(site + ("filesystem", "type"), provider, line)
            if url and not url.startswith("local://") and provider != "local":
                tree.set(site + ("filesystem", "URL"), url, line)
        elif tag == "workdirectory":
            tree.set(site + ("workDirectory",), el.text.strip(), line)
        elif tag == "scratch":
            tree.set(site + ("scratch",), el.text.strip(), line)
        elif tag in ("profile", "env"):
            ns = "env" if tag == "env" else attrs.get("namespace", "").lower()
            key = attrs.get("key", "")
            value = el.text.strip()
            if not key:
                raise ConfigError(f"{display}:{line}: <{tag}>: missing the key attribute")
            if ns == "karajan" and key.lower() == "jobthrottle":
                job_throttle = _number(value, display, line, "jobThrottle")
                profile_lines["jobThrottle"] = line
            elif ns == "karajan" and key.lower() == "initialscore":
                initial_score = _number(value, display, line, "initialScore")
                profile_lines["initialScore"] = line
            elif ns == "karajan" and key.lower() in _KARAJAN_NS:
                tree.set(site + (_KARAJAN_NS[key.lower()],), value, line)
            elif ns == "swift" and key.lower() in _SWIFT_NS:
                tree.set(site + (_SWIFT_NS[key.lower()],), value, line)
            elif ns == "env":
                tree.set(site + ("app", "ALL", "env", key), value, line)
            elif ns == "globus":
                _globus_profile(tree, site, key, value, line, exec_type)
            else:
                warnings.append(f"{display}:{line}: profile {ns}:{key} ignored "
                                "(no equivalent in swift.conf)")
        else:
            warnings.append(f"{display}:{line}: <{tag}> ignored")
    if job_throttle is not None or initial_score is not None:
        jt = job_throttle if job_throttle is not None else 0.2
        score = initial_score if initial_score is not None else 0.0
        at = profile_lines.get("jobThrottle") or profile_lines.get("initialScore")
        tree.set(site + ("maxParallelTasks",), int(jt * _T + 1), at)
        tree.set(site + ("initialParallelTasks",), int(jt * tscore(score) + 1), at)
        if job_throttle is not None:
            tree.set(site + ("jobThrottle",), job_throttle, profile_lines["jobThrottle"])
        if initial_score is not None:
            tree.set(site + ("initialScore",), initial_score, profile_lines["initialScore"])
    if not has_fs:
        tree.set(site + ("staging",), "local", pool.line)


def _number(value: str, display: str, line: int, key: str) -> float:
    """A karajan profile's number, in the range of the site key it is kept as (so that
    the parallel tasks derived from it stay Java ints)."""
    try:
        return schema.SITE[key].convert(value)
    except BadValue as exc:
        raise ConfigError(f"{display}:{line}: profile karajan:{key}: invalid value "
                          f"{value!r}, {exc}") from None


#: globus:maxtime, in seconds (0.96 held it in a Java int)
_MAXTIME_SECONDS = T("nonneg")


def _globus_profile(tree: _Tree, site: tuple[str, ...], key: str, value: str, line: int,
                    exec_type: str | None) -> None:
    lower = key.lower()
    coaster = exec_type in ("coaster", "coaster-persistent")
    if lower == "maxwalltime":
        tree.set(site + ("app", "ALL", "maxWallTime"), value, line)
    elif lower == "maxtime" and coaster:
        try:
            text = seconds_to_time(_MAXTIME_SECONDS.convert(value))
        except BadValue:
            text = value  # the coaster provider's check of maxJobTime names it
        tree.set(site + ("execution", "options", "maxJobTime"), text, line)
    elif lower == "ppn" and coaster:
        tree.set(site + ("execution", "options", "jobOptions", "ppn"), value, line)
    elif lower == "providerattributes":
        for item in value.split(";"):
            item = item.strip()
            if not item:
                continue
            name, eq, val = item.partition("=")
            tree.set(site + ("execution", "options", "jobOptions", name.strip()),
                     val.strip() if eq else True, line)
    elif coaster and lower in _COASTER_GLOBUS:
        tree.set(site + ("execution", "options", _COASTER_GLOBUS[lower]), value, line)
    elif lower in ("queue", "project"):
        tree.set(site + ("app", "ALL", "options", "job" + lower.capitalize()), value, line)
    else:
        tree.set(site + ("app", "ALL", "options", key), value, line)


# -------------------------------------------------------------------- tc.data

_PROFILE = re.compile(r'\s*([A-Za-z_]+)::([^=]+)=\s*("(?:[^"\\]|\\.)*"|[^;]*)\s*(?:;|$)')


_KIND_HINT = {
    "sites.xml": "an XML site catalog; give it with -sites.file",
    "swift.conf": "a swift.conf; give it with -config",
    "tc.data": "a transformation catalog; give it with -tc.file",
}


def guess_kind(text: str) -> str | None:
    """Which kind of configuration file ``text`` looks like, from its first meaningful
    line, so that a file given to the wrong option is named as such:
    ``sites.xml`` (starts with ``<``), ``swift.conf`` (``key: value``, ``key {``,
    ``include``), ``tc.data`` (three or more columns); None when unsure."""
    for raw in text.splitlines():
        line = raw.strip().lstrip("\ufeff")
        if not line or line.startswith(("#", "//", "!")):
            continue
        if line.startswith("<"):
            return "sites.xml"
        if line.startswith("include ") or re.match(r'^[A-Za-z_"][\w."-]*\s*(:|\{|=)', line):
            return "swift.conf"
        if len(line.split()) >= 3 and "=" not in line.split()[0] and ":" not in line.split()[0]:
            return "tc.data"
        return None
    return None


def convert_tc_data(path: str, display: str, origins: Origins, site_names: list[str],
                    default_local: bool, warnings: list[str]) -> dict[str, Any]:
    text, problem = text_problem(path, MAX_LEGACY_BYTES)
    if text is None:
        raise ConfigError(f"{display}: cannot read transformation catalog: {problem}")
    lines = text.splitlines()
    kind = guess_kind(text)
    if kind not in (None, "tc.data"):
        raise ConfigError(f"{display}: this is not a transformation catalog: it looks like "
                          f"{_KIND_HINT[kind]}")
    tree = _Tree(origins, display)
    for number, text in enumerate(lines, 1):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        columns = stripped.split(None, 5)
        if len(columns) < 3:
            raise ConfigError(f"{display}:{number}: expected at least 3 columns: SITE "
                              "TRANSFORMATION PATH [TYPE SYSINFO PROFILES], found "
                              f"{len(columns)}")
        site_name, tr, exe = columns[:3]
        _check_name(site_name, "site", display, number)
        _check_name(tr, "transformation", display, number)
        if site_name not in site_names and site_name == "localhost" and default_local:
            site_name = "local"  # 0.95's localhost is 0.96's built-in local site
        if site_names and site_name not in site_names:
            warnings.append(f"{display}:{number}: site {site_name!r} is not in the site "
                            f"catalog; entry for {tr!r} ignored")
            continue
        app = ("site", site_name, "app", "ALL" if tr == "*" else tr)
        tree.set(app + ("executable",), "*" if exe == "null" else exe, number)
        profiles = columns[5] if len(columns) > 5 else "null"
        if profiles != "null":
            _tc_profiles(tree, app, profiles, display, number)
    return tree.data


def _tc_profiles(tree: _Tree, app: tuple[str, ...], text: str, display: str,
                 line: int) -> None:
    pos = 0
    while pos < len(text):
        match = _PROFILE.match(text, pos)
        if not match or match.end() == pos:
            raise ConfigError(f"{display}:{line}: cannot read profile {text[pos:]!r}, "
                              'expected NAMESPACE::KEY="VALUE" separated by ";"')
        ns, key, value = match.group(1).lower(), match.group(2).strip(), match.group(3)
        value = value.strip()
        if value.startswith('"') and value.endswith('"') and len(value) >= 2:
            value = value[1:-1].replace('\\"', '"')
        if ns == "env":
            tree.set(app + ("env", key), value, line)
        elif key.lower() == "maxwalltime":
            tree.set(app + ("maxWallTime",), value, line)
        elif key.lower() in ("queue", "project"):
            tree.set(app + ("options", "job" + key.lower().capitalize()), value, line)
        else:
            tree.set(app + ("options", key), value, line)
        pos = match.end()


# ----------------------------------------------------------- swift.properties

_REMOVED = ("pgraph", "kickstart.", "sites.file", "tc.file", "clustering.")
#: 0.94/0.95 properties that have no counterpart here, and why
_NO_EFFECT = {
    "config.rundirs": "every run here has its own run directory (runNNN), as 0.95's "
                      "config.rundirs=true asked",
}
_VAR = re.compile(r"\$\{([^}]*)\}")


def read_properties(path: str, display: str) -> list[tuple[int, str, str]]:
    """Java properties: key=value / key: value / key value, # and ! comments, \\ lines."""
    text, problem = text_problem(path, MAX_LEGACY_BYTES)
    if text is None:
        raise ConfigError(f"{display}: cannot read properties: {problem}")
    raw_lines = text.splitlines()
    entries = []
    group = ""  # 0.95: `site.NAME {` ... `}` prefixes the lines inside
    i = 0
    while i < len(raw_lines):
        start = i + 1
        line = raw_lines[i].lstrip()
        while line.endswith("\\") and i + 1 < len(raw_lines):
            i += 1
            line = line[:-1] + raw_lines[i].lstrip()
        i += 1
        if not line or line[0] in "#!":
            continue
        opening = re.match(r"([^=:\s{]+)\s*\{\s*$", line)
        if opening and not group:
            group = opening.group(1) + "."
            continue
        if line.rstrip() == "}" and group:
            group = ""
            continue
        match = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if not match:
            entries.append((start, group + line.strip(), ""))
            continue
        entries.append((start, group + match.group(1), match.group(2).strip()))
    return entries


#: names only a swift.properties (or 0.94's cf) file has: swift.conf spells them otherwise
def _properties_only(key: str) -> bool:
    return (key in PROPERTY_NAMES or key in _NO_EFFECT or key.startswith(_REMOVED)
            or key in ("use.provider.staging", "use.wrapper.staging", "ticker.disable"))


def is_properties_file(path: str) -> bool:
    """Whether a file given as ``-config`` is a 0.94/0.95 properties file (0.94's ``cf``):
    flat ``key=value`` lines, no HOCON object, list or include, and some key that only
    swift.properties has (``foreach.max.threads``, ``sites.file``...), which a swift.conf
    could not hold anyway.  A ``key: value`` line is swift.conf's way (0.96 refused a
    properties name written so, and so does the swift.conf check, with the new name)."""
    text, _ = text_problem(path, MAX_LEGACY_BYTES)
    if text is None:
        return False
    keys = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!" or line.startswith("//"):
            continue
        if any(c in line for c in "{}[]") or line.startswith("include"):
            return False
        found = re.match(r"([^=:\s]+)\s*=", line)
        if found is None:
            return False
        keys.append(found.group(1))
    return any(_properties_only(key) for key in keys)


def convert_properties(path: str, display: str, origins: Origins, env: Mapping[str, str],
                       warnings: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """swift.properties -> (tree, {"sites.file": ..., "tc.file": ...} it named)."""
    props = system_properties(env)
    tree = _Tree(origins, display)
    files: dict[str, str] = {}
    errors = []

    def expand(value: str) -> str:
        def one(match: re.Match) -> str:
            name = match.group(1)
            if name.startswith("env."):
                return env.get(name[4:], "")
            return props.get(name, env.get(name, match.group(0)))

        value = _VAR.sub(one, value)
        # 0.95 files also used shell-style $USER
        return re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)",
                      lambda m: env.get(m.group(1), m.group(0)), value)

    for line, key, value in read_properties(path, display):
        value = expand(value)
        if key.startswith(("site.", "app.")) and key.count(".") >= 2:
            try:
                _flat_site_property(tree, key, value, line)
            except ValueError as exc:
                errors.append(f"{display}:{line}: {key}: {exc}")
            continue
        if key in ("site", "sites"):
            tree.set(("sites",), value, line)
            continue
        if key in ("sites.file", "tc.file"):
            files[key] = value
            continue
        if key in ("use.provider.staging", "use.wrapper.staging"):
            if value.lower() == "true":
                tree.set(("staging",), "local" if "provider" in key else "wrapper", line)
            continue
        if key == "ticker.disable":
            tree.set(("tickerEnabled",), "false" if value.lower() == "true" else "true",
                     line)
            continue
        if key in PROPERTY_NAMES:
            tree.set((PROPERTY_NAMES[key],), value, line)
            continue
        if key.startswith(_REMOVED):
            warnings.append(f"{display}:{line}: {key}: ignored (removed in Swift 0.96)")
            continue
        if key in _NO_EFFECT:
            warnings.append(f"{display}:{line}: {key}: ignored ({_NO_EFFECT[key]})")
            continue
        if key in schema.GLOBAL and key not in ("site", "app"):
            tree.set((key,), value, line)  # already a swift.conf name
            continue
        names = list(PROPERTY_NAMES) + ["sites.file", "tc.file", "use.provider.staging",
                                        "use.wrapper.staging", "ticker.disable"]
        near = close_matches(key, names, cutoff=0.6)
        errors.append(f"{display}:{line}: {key}: unknown property"
                      + (f", did you mean {near[0]}?" if near else ""))
    _flat_site_defaults(tree, display, warnings)
    # 0.95: apps are found on $PATH unless swift.properties defines some app.SITE.NAME
    flat_sites = tree.data.get("site") or {}
    if flat_sites and not any("app" in body and set(body["app"]) - {"ALL"}
                              for body in flat_sites.values()):
        for name in flat_sites:
            first = min((o.line or 0 for k, o in origins.leaves.items()
                         if k[:2] == ("site", name) and o.file == display), default=None)
            tree.set(("site", name, "app", "ALL", "executable"), "*", first)
    if errors:
        raise ConfigError(errors)
    return tree.data, files


# 0.95's flat site properties (docs/userguide/configuration.old) -> swift.conf paths.
_FLAT_SITE = {
    "tasksperworker": ("execution", "options", "tasksPerNode"),
    "taskspernode": ("execution", "options", "tasksPerNode"),
    "jobspernode": ("execution", "options", "tasksPerNode"),
    "jobqueue": ("execution", "options", "jobQueue"),
    "queue": ("execution", "options", "jobQueue"),
    "jobproject": ("execution", "options", "jobProject"),
    "project": ("execution", "options", "jobProject"),
    "jobwalltime": ("execution", "options", "maxJobTime"),
    "maxjobs": ("execution", "options", "maxJobs"),
    "maxnodesperjob": ("execution", "options", "maxNodesPerJob"),
    "jobgranularity": ("execution", "options", "nodeGranularity"),
    "userhomeoverride": ("execution", "options", "userHomeOverride"),
    "taskwalltime": ("app", "ALL", "maxWallTime"),
    "maxwalltime": ("app", "ALL", "maxWallTime"),
    "workdir": ("workDirectory",),
    "taskdir": ("scratch",),
    "initialscore": ("initialScore",),
    "jobthrottle": ("jobThrottle",),
}


def _flat_site_property(tree: _Tree, key: str, value: str, line: int) -> None:
    """``site.NAME.prop=value`` and ``app.SITE.NAME=/path`` of 0.95 swift.properties."""
    head, name, prop = key.split(".", 2)
    site = ("site", name)
    if head == "app":
        tree.set(site + ("app", prop, "executable"), value, line)
        return
    lower = prop.lower()
    if lower in ("jobmanager", "provider"):
        manager = value if ":" in value else f"local:{value}"
        if manager == "local:local" and lower == "jobmanager":
            tree.set(site + ("execution", "type"), "local", line)
            return
        tree.set(site + ("execution", "type"), "coaster", line)
        tree.set(site + ("execution", "URL"), "localhost", line)
        tree.set(site + ("execution", "jobManager"), manager, line)
    elif lower == "filesystem":
        tree.set(site + ("filesystem", "type"), value, line)
    elif lower == "taskthrottle":
        tree.set(site + ("maxParallelTasks",), value, line)
        tree.set(site + ("initialParallelTasks",), value, line)
    elif lower == "providerattributes":
        for item in value.split(";"):
            if item.strip():
                attr, eq, val = item.partition("=")
                tree.set(site + ("execution", "options", "jobOptions", attr.strip()),
                         val.strip() if eq else True, line)
    elif lower.split(".")[0] in ("slurm", "condor", "pbs", "cobalt", "sge", "lsf") or \
            lower in _FLAT_JOB_OPTIONS:
        tree.set(site + ("execution", "options", "jobOptions") + (prop,), value, line)
    elif lower in _FLAT_SITE:
        tree.set(site + _FLAT_SITE[lower], value, line)
    elif lower in _COASTER_GLOBUS:  # 0.95 took the coaster keys in any case
        tree.set(site + ("execution", "options", _COASTER_GLOBUS[lower]), value, line)
    else:
        names = {n.lower(): n for n in _FLAT_SITE_NAMES}
        near = close_matches(lower, list(names), cutoff=0.6)
        raise ValueError("unknown site property" + (f", did you mean {names[near[0]]}?"
                                                     if near else ""))


#: 0.95 flat site properties that are the batch system's own (CoG's ``pe`` attribute)
_FLAT_JOB_OPTIONS = ("pe", "ppn", "depth")

def _passive_manager(tree: _Tree, name: str, execution: dict[str, Any], display: str,
                     warnings: list[str]) -> None:
    """0.95's ``workerManager=passive`` beside a ``jobmanager``: the service started no
    blocks, so the jobmanager's batch system went unused; it is dropped with a warning."""
    options = execution.get("options") or {}
    manager = str(execution.get("jobManager") or "local:local")
    if str(options.get("workerManager", "")).lower() != "passive" or \
            manager in ("local:local", "local"):
        return
    where = tree.origins.get(("site", name, "execution", "jobManager"))
    line = where.line if where is not None else None
    tree.set(("site", name, "execution", "jobManager"), "local:local", line)
    warnings.append(f"{display}:{line}: site.{name}.jobmanager {manager!r} has no effect: "
                    "with workerManager=passive the coaster service starts no blocks "
                    "(workers are started by hand and connect to it); ignored")


_FLAT_SITE_NAMES = (
    "tasksPerWorker", "tasksPerNode", "jobsPerNode", "jobQueue", "queue", "jobProject",
    "project", "jobWalltime", "maxJobs", "maxNodesPerJob", "jobGranularity",
    "userHomeOverride", "taskWalltime", "maxWalltime", "workdir", "taskDir", "initialScore",
    "jobThrottle", "jobManager", "provider", "filesystem", "taskThrottle",
    "providerAttributes", *_FLAT_JOB_OPTIONS, *_COASTER_GLOBUS.values())


def _flat_site_defaults(tree: _Tree, display: str, warnings: list[str]) -> None:
    """A 0.95 flat site with no ``jobmanager``/``provider`` ran on this machine (0.95's
    default provider was local): say so, rather than refusing its missing
    execution.type."""
    for name, body in (tree.data.get("site") or {}).items():
        if isinstance(body, dict) and "execution" in body:
            _passive_manager(tree, name, body["execution"], display, warnings)
            continue
        if not isinstance(body, dict):
            continue
        if set(body) <= {"app"} or name == "local":
            continue  # only apps: they join the sites that define them; local is local
        line = min((o.line or 0 for k, o in tree.origins.leaves.items()
                    if k[:2] == ("site", name) and o.file == display), default=None)
        tree.set(("site", name, "execution", "type"), "local", line)
        warnings.append(f"{display}:{line}: site.{name} has no jobmanager: it runs on this "
                        "machine (execution type local), as Swift 0.95 ran it")


# -------------------------------------------------------------------- driving

def _named_file(path: str, properties_file: str | None, key: str, what: str, instead: str,
                resolve: Callable[[str], str], warnings: list[str]) -> str | None:
    """The file a properties file names as ``key``, or None when it does not exist:
    0.94/0.95 properties named the installation's own etc/sites.xml and etc/tc.data,
    which a swiftnb installation does not have; Swift then ran on its defaults."""
    if os.path.isfile(resolve(path)):
        return path
    warnings.append(f"{properties_file}: {key} {path}: {what} not found (the installation "
                    f"default of Swift 0.94/0.95?); using the default: {instead}")
    return None


def legacy_layers(*, sites_file: str | None, tc_file: str | None,
                  properties_file: str | None, resolve: Callable[[str], str],
                  origins: Origins, env: Mapping[str, str],
                  warnings: list[str]) -> list[Layer]:
    """The layers of the legacy trio, in the order swift-convert-config merged them."""
    layers: list[Layer] = []
    named: dict[str, str] = {}
    if properties_file is not None:
        data, named = convert_properties(resolve(properties_file), properties_file, origins,
                                         env, warnings)
        layers.append(Layer("[R]", properties_file, tree_from_dict(data)))
        base = os.path.dirname(properties_file)
        named = {k: v if os.path.isabs(v) else os.path.normpath(os.path.join(base, v))
                 for k, v in named.items()}
    if sites_file is None and "sites.file" in named:
        sites_file = _named_file(named["sites.file"], properties_file, "sites.file",
                                 "site catalog", "the local site (this machine)", resolve,
                                 warnings)
    tc_fell_back = False
    if tc_file is None and "tc.file" in named:
        tc_fell_back = True
        tc_file = _named_file(named["tc.file"], properties_file, "tc.file",
                              "transformation catalog", "apps are found on each site's "
                              "PATH, as Swift 0.96 found them with no tc.data", resolve,
                              warnings)
    handles: list[str] = []
    if sites_file is not None:
        if not os.path.isfile(resolve(sites_file)):
            raise ConfigError(f"{sites_file}: site catalog not found")
        data, handles, root_line = convert_sites_xml(resolve(sites_file), sites_file,
                                                     origins, warnings)
        if not handles:
            raise ConfigError(f"{sites_file}: the site catalog defines no <pool>")
        if tc_fell_back and tc_file is None:  # no tc.data: every app on the pools' PATH
            for handle in handles:
                data["site"][handle].setdefault("app", {}).setdefault(
                    "ALL", {"executable": "*"})
        data["sites"] = list(handles)
        origins.set_leaf(("sites",), Origin("[R]", sites_file, root_line, primary=False))
        # a pool named local replaces the built-in local site (`site.local: null` first)
        nulls: list[tuple[str, ...]] = [("site", "local")] if "local" in handles else []
        layers.append(Layer("[R]", sites_file, tree_from_dict(data), nulls=nulls))
    if tc_file is not None:
        if not os.path.isfile(resolve(tc_file)):
            raise ConfigError(f"{tc_file}: transformation catalog not found")
        data = convert_tc_data(resolve(tc_file), tc_file, origins, handles,
                               default_local=sites_file is None, warnings=warnings)
        layers.append(Layer("[R]", tc_file, tree_from_dict(data)))
    return layers


__all__ = ["legacy_layers", "is_properties_file", "convert_sites_xml", "convert_tc_data",
           "convert_properties", "tscore", "read_properties"]
