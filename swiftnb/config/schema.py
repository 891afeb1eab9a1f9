"""The shape of swift.conf: every key Swift 0.96 knew, its type and schema default,
plus the keys swiftnb adds (marked EXTENSION) for features 0.96 had elsewhere.

A node is a ``ValueType`` (a leaf), a dict of known child keys, where the child ``"*"``
stands for any name (``site.*``, ``app.*``, ``env.*``).  ``T("object")`` accepts any
subtree unchecked (e.g. ``jobOptions``, where LRM-specific keys live).

A site's ``execution.options`` are not declared here: they belong to the provider its
``execution.type`` selects, which declares and checks them (see EXECUTION_OPTIONS).
"""

from __future__ import annotations

from typing import Any

from swiftnb.config.types import THROTTLE_OFF, T

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

# A site's ``execution.options`` are the provider's: each provider declares them once, as a
# typed class it reads them with (``swiftnb.scheduling.options.ProviderOptions``; the
# coaster provider's ``CoasterSettings``, the sim provider's ``SIM_OPTIONS``), and the
# builder checks them against the class the site's ``execution.type`` selects
# (``swiftnb.scheduling.build.check_sites``, also run by ``swiftnb check-config``).  Here
# they are an object of any keys, kept as written.
EXECUTION_OPTIONS = T("object")

#: Swift 0.96's own execution option names (reference 4.3), only so that one written at
#: the wrong level gets "did you mean execution.options.maxJobs?"; the coaster provider
#: declares and checks them (swiftnb.coasters.settings).
SWIFT_EXECUTION_OPTION_NAMES = (
    "maxJobs", "nodeGranularity", "maxNodesPerJob", "tasksPerNode", "allocationStepSize",
    "lowOverallocation", "highOverallocation", "overallocationDecayFactor", "spread",
    "exponentialSpread", "reserve", "maxJobTime", "jobQueue", "jobProject",
    "userHomeOverride", "internalHostName", "workerLoggingLevel", "workerLoggingDirectory",
    "workerManager", "softImage", "jobOptions",
)

SITE: dict[str, Any] = {
    "OS": T("string"),
    "maxParallelTasks": T("posint"),
    "initialParallelTasks": T("posint"),
    # a base below 1 would shorten the back-off as failures add up; above 100 the
    # back-off (0.1 s * delayBase ** -score) overflows within a few failures
    "delayBase": T("float", low=1, high=100),
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
    # maxParallelTasks = int(jobThrottle * 100 + 1) must stay a Java int
    "jobThrottle": T("posfloat", high=(2**31 - 2) / 100),
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
    # EXTENSION: the -info records one file per job, as Swift (else appended to one)
    "wrapperLogPerJob": T("bool"),
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
    # EXTENSION: memoized calls (docs/memoization.md): reuse a call whose app, arguments
    # and inputs' contents are those of an earlier call; the run store's directory; how
    # many bytes of output copies it keeps to restore deleted outputs (LRU)
    "memoize": T("bool"),
    "memoizeStore": T("string"),
    "memoizeCacheSize": T("size"),
    # the web monitor's interface (docs/monitors.md): 127.0.0.1 unless set
    "monitorListenAddress": T("string"),
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
    "wrapperLogPerJob": False,
    "tracingEnabled": False,
    "wrapperStagingLocalServer": "file://",
    "maxForeachThreads": 16384,
    "maxThreads": 1000000,
    "clusteringEnabled": False,
    "clusteringMinTime": 60,
    "clusteringQueueDelay": 4.0,
    "siteSelectionPolicy": "weighted",
    "siteSelectionOptions": {},
    # off on the command line, so that a Swift 0.96 user sees 0.96's behaviour; the
    # Swift kernel and %%swift turn it on where the configuration does not say
    "memoize": False,
    "memoizeStore": ".swiftnb",
    "memoizeCacheSize": 1 << 30,
    "monitorListenAddress": "127.0.0.1",
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

EXECUTION_TYPES = (
    "local", "coaster", "coaster-persistent", "ssh", "ssh-cl", "pbs", "condor", "sge",
    "slurm", "lsf", "cobalt", "gt2", "ec2-cloud", "gce-cloud", "radical-pilot",
    "aimes-emanager", "shell", "fake", "pbslocal", "condorlocal", "cobaltlocal", "sim", "moab",
)

SITE_SELECTION_POLICIES = ("weighted", "best", "sitesets", "brokerage")



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
    "THROTTLE_OFF",
    "node_at",
]
