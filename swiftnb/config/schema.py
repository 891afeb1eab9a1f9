"""The shape of swift.conf: every key Swift 0.96 knew, its type and schema default,
plus the keys swiftnb adds (marked EXTENSION) for features 0.96 had elsewhere.

A node is a ``ValueType`` (a leaf), a dict of known child keys, where the child ``"*"``
stands for any name (``site.*``, ``app.*``, ``env.*``).  ``T("object")`` accepts any
subtree unchecked (e.g. ``jobOptions``, where LRM-specific keys live).

Keys of later features (ssh, batch schedulers, coaster options, the ``sim`` execution
type) are declared here so they validate and are kept before their providers exist.
Other parts may add execution options with ``register_execution_options``.
"""

from __future__ import annotations

from typing import Any

from swiftnb.config.types import THROTTLE_OFF, T, ValueType, interval

STAGING = ("swift", "wrapper", "local", "service-local", "shared-fs", "direct")

APP_OPTIONS: dict[str, Any] = {
    "jobType": T("string"),
    "jobQueue": T("string"),
    "jobProject": T("string"),
    "count": T("posint"),
    "depth": T("posint"),
    "ppn": T("posint"),
    "pbs": T("object"),
    "condor": T("object"),
    "mpi": T("object"),
    "docker": T("object"),
    "radical-pilot": T("object"),
    "*": T("any"),  # any other option becomes a job attribute (0.96: "*": ?Object)
}

APP: dict[str, Any] = {
    "executable": T("string"),
    "maxWallTime": T("time"),
    "exclusive": T("bool"),
    "options": APP_OPTIONS,
    "env": {"*": T("string")},
    "*": T("any"),  # any other key becomes a job attribute (jobType, count, ...)
}

COASTER_OPTIONS: dict[str, Any] = {
    "maxJobs": T("posint"),
    "nodeGranularity": T("posint"),
    "tasksPerNode": T("posint"),
    "jobsPerNode": T("posint"),  # pre-0.96 name of tasksPerNode
    "allocationStepSize": interval(0.0, 1.0),
    "lowOverallocation": T("posfloat"),
    "highOverallocation": T("posfloat"),
    "overallocationDecayFactor": T("posfloat"),
    "spread": interval(0.0, 1.0),
    "exponentialSpread": T("int"),
    "reserve": T("seconds"),
    "maxNodesPerJob": T("posint"),
    "maxJobTime": T("time"),
    "userHomeOverride": T("string"),
    "internalHostName": T("string"),
    "jobQueue": T("string"),
    "jobProject": T("string"),
    "workerLoggingLevel": T("choice", "NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"),
    "workerLoggingDirectory": T("string"),
    "workerManager": T("choice", "block", "passive"),
    "softImage": T("string"),
    "remoteMonitorEnabled": T("bool"),
    "jobOptions": T("object"),
}

# EXTENSION: the simulated grid (execution type "sim"), durations in seconds.
SIM_OPTIONS: dict[str, Any] = {
    "slots": T("posint"),
    "queueTime": T("distribution"),
    "taskDuration": T("distribution"),
    "failureProbability": interval(0.0, 1.0),
    "seed": T("int"),
    "outages": T("outages"),
    "speed": T("gtzero"),
}

# EXTENSION: direct ssh execution and batch submission without coasters.
SSH_OPTIONS: dict[str, Any] = {
    "user": T("string"),
    "port": T("posint"),
    "identityFile": T("string"),
    "knownHosts": T("string"),
    "password": T("string"),
    "connectTimeout": T("posfloat"),
    "reconnectTimeout": T("posfloat"),
    "acceptNewHostKeys": T("bool"),
    "python": T("string"),
}

BATCH_OPTIONS: dict[str, Any] = {
    "nodes": T("posint"),
    "ppn": T("posint"),
    "memory": T("string"),
    "account": T("string"),
    "partition": T("string"),
    "submitCommand": T("string"),
    "pollInterval": T("posfloat"),
    "exclusive": T("bool"),
}

# EXTENSION: options of swiftnb's own providers, declared here too so a configuration
# using them loads before those modules are imported (they register the same keys).
PROVIDER_EXTRA_OPTIONS: dict[str, Any] = {
    # sim
    "submitTime": T("distribution"), "stageInTime": T("distribution"),
    "writeOutputs": T("bool"), "failureMessage": T("string"),
    # coasters
    "parallelism": interval(0.0, 1.0), "maxWorkerIdleTime": T("posfloat"),
    "suspendDelay": T("float"), "planInterval": T("gtzero"),
    "listenAddress": T("string"), "servicePort": T("int"), "workerRetries": T("int"),
    "prefetch": T("autoint"), "defaultWalltime": T("time"), "maxtime": T("posint"),
}

EXECUTION_OPTIONS: dict[str, Any] = {
    **COASTER_OPTIONS, **SIM_OPTIONS, **SSH_OPTIONS, **BATCH_OPTIONS,
    **PROVIDER_EXTRA_OPTIONS,
}

SITE: dict[str, Any] = {
    "OS": T("string"),
    "maxParallelTasks": T("posint"),
    "initialParallelTasks": T("posint"),
    "delayBase": T("float"),
    "maxSubmitRate": T("posfloat"),
    "staging": T("choice", *STAGING),
    "filesystem": {"type": T("string"), "URL": T("string"), "options": T("object")},
    "execution": {
        "type": T("string"),
        "URL": T("string"),
        "jobManager": T("string"),
        "credentials": T("object"),
        "options": EXECUTION_OPTIONS,
    },
    "workDirectory": T("string"),
    "scratch": T("string"),
    "app": {"*": APP},
    "wrapperInterpreter": T("string"),
    "wrapperInterpreterOptions": T("stringlist"),
    "wrapperScript": T("string"),
    "cleanupCommand": T("string"),
    "cleanupCommandOptions": T("stringlist"),
    "wrapperParameterMode": T("choice", "args", "files"),
    "keepSiteDir": T("bool"),
    "statusMode": T("choice", "files", "provider"),
    # EXTENSION: sites.xml karajan profiles kept as site keys, and brokerage facts.
    "initialScore": T("float"),
    "jobThrottle": T("posfloat"),
    "resources": T("object"),
}

GLOBAL: dict[str, Any] = {
    "sites": T("stringlist"),
    "staging": T("choice", *STAGING),
    "lazyErrors": T("bool"),
    "executionRetries": T("nonneg"),
    "cachingAlgorithm": T("choice", "LRU"),
    "jobSubmitThrottle": T("throttle"),
    "hostJobSubmitThrottle": T("throttle"),
    "fileTransfersThrottle": T("throttle"),
    "fileOperationsThrottle": T("throttle"),
    "siteScoreThrottlingFactor": T("posfloat"),
    "keepSiteDir": T("bool"),
    "logProvenance": T("bool"),
    "replicationEnabled": T("bool"),
    "replicationMinQueueTime": T("posint"),
    "replicationLimit": T("posint"),
    "statusMode": T("choice", "files", "provider"),
    "wrapperParameterMode": T("choice", "args", "files"),
    "wrapperInvocationMode": T("choice", "absolute", "relative"),
    "CDMBroadcastMode": T("string"),
    "CDMFile": T("string"),
    "providerStagingPinSwiftFiles": T("bool"),
    "tickerDateFormat": T("string"),
    "tickerPrefix": T("string"),
    "tickerEnabled": T("bool"),
    "fileGCEnabled": T("bool"),
    "mappingCheckerEnabled": T("bool"),
    "hostName": T("string"),
    "TCPPortRange": T("portrange"),
    "alwaysTransferWrapperLog": T("bool"),
    "tracingEnabled": T("bool"),
    "wrapperStagingLocalServer": T("string"),
    "maxForeachThreads": T("posint"),
    "maxThreads": T("posint"),
    "rootFS": T("object"),
    # EXTENSION: clustering (User Guide section 17; properties clustering.*).
    "clusteringEnabled": T("bool"),
    "clusteringMinTime": T("nonneg"),
    "clusteringQueueDelay": T("posfloat"),
    # EXTENSION: the site selection policy of the scheduler and its parameters.
    "siteSelectionPolicy": T("string"),
    "siteSelectionOptions": T("object"),
    "site": {"*": SITE},
    "app": {"*": APP},
}

# Schema defaults (resources/swift.conf.schema); the built-in etc/swift.conf then sets
# the distribution values on top (lazyErrors true, alwaysTransferWrapperLog true, ...).
GLOBAL_DEFAULTS: dict[str, Any] = {
    "staging": "swift",
    "lazyErrors": False,
    "executionRetries": 0,
    "cachingAlgorithm": "LRU",
    "jobSubmitThrottle": 4,
    "hostJobSubmitThrottle": 2,
    "fileTransfersThrottle": 4,
    "fileOperationsThrottle": 8,
    "siteScoreThrottlingFactor": 0.2,
    "keepSiteDir": False,
    "logProvenance": False,
    "replicationEnabled": False,
    "replicationMinQueueTime": 60,
    "replicationLimit": 3,
    "statusMode": "files",
    "wrapperParameterMode": "args",
    "wrapperInvocationMode": "absolute",
    "CDMBroadcastMode": "file",
    "CDMFile": "fs.data",
    "providerStagingPinSwiftFiles": False,
    "tickerDateFormat": None,
    "tickerPrefix": "Progress: ",
    "tickerEnabled": True,
    "fileGCEnabled": True,
    "mappingCheckerEnabled": True,
    "hostName": None,
    "TCPPortRange": None,
    "alwaysTransferWrapperLog": False,
    "tracingEnabled": False,
    "wrapperStagingLocalServer": "file://",
    "maxForeachThreads": 16384,
    "maxThreads": 1000000,
    "clusteringEnabled": False,
    "clusteringMinTime": 60,
    "clusteringQueueDelay": 4.0,
    "siteSelectionPolicy": "weighted",
    "siteSelectionOptions": {},
}

SITE_DEFAULTS: dict[str, Any] = {
    "OS": "INTEL32::LINUX",
    "maxParallelTasks": 2,
    "initialParallelTasks": 2,
    "delayBase": 2.0,
    "wrapperInterpreter": "/bin/bash",
    "wrapperInterpreterOptions": [],
    "wrapperScript": "_swiftwrap",
    "cleanupCommand": "/bin/rm",
    "cleanupCommandOptions": ["-rf"],
}

# Sites whose OS names Windows get the VBScript wrapper (Guide 11.2).
WINDOWS_SITE_DEFAULTS: dict[str, Any] = {
    "wrapperInterpreter": "cscript.exe",
    "wrapperInterpreterOptions": ["//Nologo"],
    "wrapperScript": "_swiftwrap.vbs",
    "cleanupCommand": "cmd.exe",
    "cleanupCommandOptions": ["/C", "del", "/Q"],
}

# Staging methods done by the provider (the wrapper is then _swiftwrap.staging).
PROVIDER_STAGING = ("local", "service-local", "shared-fs", "direct")

# Coaster settings defaults (provider-coaster Settings), in model units (seconds).
COASTER_DEFAULTS: dict[str, Any] = {
    "maxJobs": 20,
    "nodeGranularity": 1,
    "maxNodesPerJob": 2**31 // 1024 - 1,  # Integer.MAX_VALUE / 1024 = 2097151
    "tasksPerNode": 1,
    "allocationStepSize": 0.1,
    "lowOverallocation": 10.0,
    "highOverallocation": 1.0,
    "overallocationDecayFactor": 0.001,
    "spread": 0.9,
    "exponentialSpread": 0,
    "reserve": 60,
    "maxJobTime": 360 * 24 * 3600,
    "jobQueue": None,
    "jobProject": None,
    "userHomeOverride": None,
    "internalHostName": None,
    "workerLoggingLevel": "NONE",
    "workerLoggingDirectory": "~/.globus/coasters",
    "workerManager": "block",
    "softImage": None,
    "jobOptions": {},
}

SIM_DEFAULTS: dict[str, Any] = {
    "slots": 1,
    "queueTime": 0,
    "taskDuration": 1,
    "failureProbability": 0.0,
    "seed": 0,
    "outages": [],
    "speed": 1.0,
}

EXECUTION_TYPES = (
    "local", "coaster", "coaster-persistent", "ssh", "ssh-cl", "pbs", "condor", "sge",
    "slurm", "lsf", "cobalt", "gt2", "ec2-cloud", "gce-cloud", "radical-pilot",
    "aimes-emanager", "shell", "fake", "pbslocal", "condorlocal", "cobaltlocal", "sim",
)

SITE_SELECTION_POLICIES = ("weighted", "best", "sitesets", "brokerage")


def register_execution_options(options: dict[str, ValueType]) -> None:
    """Let a provider declare more ``execution.options`` keys (name -> ValueType)."""
    EXECUTION_OPTIONS.update(options)


def node_at(path: tuple[str, ...]) -> Any:
    """The schema node for a key path, or None if the path is not in the schema."""
    node: Any = GLOBAL
    for part in path:
        if not isinstance(node, dict):
            return None
        if part in node:
            node = node[part]
        elif "*" in node:
            node = node["*"]
        else:
            return None
    return node


__all__ = [
    "APP", "GLOBAL", "SITE", "EXECUTION_OPTIONS", "GLOBAL_DEFAULTS", "SITE_DEFAULTS",
    "COASTER_DEFAULTS", "SIM_DEFAULTS", "THROTTLE_OFF", "register_execution_options",
    "node_at",
]
