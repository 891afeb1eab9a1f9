"""Checking the merged tree against the schema, with messages for people.

Every problem is reported as ``file:line: key: problem`` with, for an unknown key, the
nearest valid key ("did you mean maxJobs?"), found among the keys valid at that place,
then among keys valid elsewhere (``maxJobs`` written at site level ->
``execution.options.maxJobs``), then among the legacy swift.properties names
(``lazy.errors`` -> ``lazyErrors``).  All problems are collected, not just the first.
"""

from __future__ import annotations

import json
from typing import Any

from swiftnb.config import schema
from swiftnb.config.locate import Origins
from swiftnb.config.types import BadValue, ValueType
from swiftnb.nearest import close_matches

PROPERTY_NAMES = {
    "hostname": "hostName", "ip.address": "hostName", "tcp.port.range": "TCPPortRange",
    "lazy.errors": "lazyErrors", "execution.retries": "executionRetries",
    "caching.algorithm": "cachingAlgorithm", "throttle.submit": "jobSubmitThrottle",
    "throttle.host.submit": "hostJobSubmitThrottle",
    "throttle.transfers": "fileTransfersThrottle",
    "throttle.file.operations": "fileOperationsThrottle",
    "throttle.score.job.factor": "siteScoreThrottlingFactor",
    "sitedir.keep": "keepSiteDir", "provenance.log": "logProvenance",
    "replication.enabled": "replicationEnabled",
    "replication.min.queue.time": "replicationMinQueueTime",
    "replication.limit": "replicationLimit", "status.mode": "statusMode",
    "wrapper.parameter.mode": "wrapperParameterMode",
    "wrapper.invocation.mode": "wrapperInvocationMode",
    "cdm.broadcast.mode": "CDMBroadcastMode", "cdm.file": "CDMFile",
    "provider.staging.pin.swiftfiles": "providerStagingPinSwiftFiles",
    "ticker.date.format": "tickerDateFormat", "ticker.prefix": "tickerPrefix",
    "ticker.enabled": "tickerEnabled", "file.gc.enabled": "fileGCEnabled",
    "mapping.checker": "mappingCheckerEnabled",
    "wrapperlog.always.transfer": "alwaysTransferWrapperLog",
    "tracing.enabled": "tracingEnabled",
    "wrapper.staging.local.server": "wrapperStagingLocalServer",
    "foreach.max.threads": "maxForeachThreads",
    "clustering.enabled": "clusteringEnabled", "clustering.min.time": "clusteringMinTime",
    "clustering.queue.delay": "clusteringQueueDelay",
}


def show(value: Any) -> str:
    """A value as messages quote it: strings in JSON quotes, with control characters
    escaped (never written raw to a terminal) and other characters as they are."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{...}"
    return json.dumps(value) if isinstance(value, list) else str(value)


def printable(text: str) -> str:
    """``text`` for a message: as it is, or JSON-escaped if it holds control or other
    unprintable characters (a key may be any string in HOCON)."""
    return text if text.isprintable() else json.dumps(text, ensure_ascii=False)[1:-1]


class Checker:
    def __init__(self, origins: Origins) -> None:
        self.origins = origins
        self.errors: list[str] = []

    def where(self, path: tuple[str, ...]) -> str:
        found = self.origins.get(path)
        return found.location() if found else "<configuration>"

    def error(self, path: tuple[str, ...], problem: str) -> None:
        self.errors.append(f"{self.where(path)}: {printable('.'.join(path))}: {problem}")

    # -- the walk
    def check(self, node: Any, value: Any, path: tuple[str, ...]) -> None:
        if isinstance(node, ValueType):
            try:
                node.convert(value)
            except BadValue as exc:
                self.error(path, f"invalid value {show(value)}, {exc}")
            return
        if not isinstance(value, dict):
            self.error(path, f"invalid value {show(value)}, expected an object ({{ ... }})")
            return
        for key, sub in value.items():
            child = node.get(key)
            if child is None and "*" in node:
                child = node["*"]
                if _is_attribute(child) and _near_miss(key, node):
                    # free-form attributes, but `exectuable` is surely a typo
                    self.unknown(node, key, sub, path)
                    continue
            if child is None:
                self.unknown(node, key, sub, path)
            else:
                self.check(child, sub, path + (key,))

    def unknown(self, node: dict, key: str, value: Any, path: tuple[str, ...]) -> None:
        full = path + (key,)
        if not path:
            for dotted in _leaf_paths(key, value):
                if dotted in PROPERTY_NAMES:  # a swift.properties name in swift.conf
                    self.error(tuple(dotted.split(".")), "unknown key (a swift.properties "
                               f"name), did you mean {PROPERTY_NAMES[dotted]}?")
                    return
        hint = suggest(key, value, node, path)
        self.error(full, "unknown key" + (f", did you mean {hint}?" if hint else ""))


def _is_attribute(node: Any) -> bool:
    return isinstance(node, ValueType) and node.kind == "any"



def _near_miss(key: str, node: dict) -> bool:
    known = [k for k in node if k != "*"]
    lowered = [k.lower() for k in known]
    return key.lower() in lowered or bool(
        close_matches(key, known, cutoff=0.8))


def suggest(key: str, value: Any, node: dict, path: tuple[str, ...]) -> str | None:
    """The nearest valid key for an unknown ``key`` found at ``path``."""
    here = [k for k in node if k != "*"]
    # A legacy dotted property written in swift.conf: lazy.errors -> lazyErrors.
    if not path:
        for dotted in _leaf_paths(key, value):
            if dotted in PROPERTY_NAMES:
                return PROPERTY_NAMES[dotted]
    lowered = {k.lower(): k for k in here}
    if key.lower() in lowered:
        return lowered[key.lower()]
    close = close_matches(key, here, cutoff=0.75)
    if close:
        return close[0]
    # A key valid somewhere else in the same scope (site or global).
    scope_path, scope = _scope(path)
    if scope_path:
        option = {n.lower(): n for n in schema.SWIFT_EXECUTION_OPTION_NAMES}.get(key.lower())
        if option is not None:
            return f"execution.options.{option}"
    elsewhere = _find(scope, key)
    if elsewhere:
        return ".".join(elsewhere)
    if not scope_path:  # a site key written at the top level
        in_site = _find(schema.SITE, key)
        if in_site:
            return "site.<name>." + ".".join(in_site)
    close = close_matches(key.lower(), lowered)
    if close:
        return lowered[close[0]]
    return None


def _leaf_paths(key: str, value: Any) -> list[str]:
    if not isinstance(value, dict):
        return [key]
    result = []
    for sub_key, sub in value.items():
        result += [f"{key}.{p}" for p in _leaf_paths(sub_key, sub)]
    return result


def _scope(path: tuple[str, ...]) -> tuple[tuple[str, ...], dict]:
    if len(path) >= 2 and path[0] == "site":
        return path[:2], schema.SITE
    return (), schema.GLOBAL


def _find(scope: dict, key: str, trail: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The path (relative to scope) of a schema key named ``key`` (case-insensitive)."""
    best = None
    for name, sub in scope.items():
        if name == "*":
            continue
        if name.lower() == key.lower():
            candidate = trail + (name,)
            if best is None or len(candidate) < len(best):
                best = candidate
        if isinstance(sub, dict) and not (trail == () and name in ("site", "app")):
            found = _find(sub, key, trail + (name,))
            if found and (best is None or len(found) < len(best)):
                best = found
    return best
