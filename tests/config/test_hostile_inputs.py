"""Hostile configuration inputs through the real ``swiftnb`` command (issue 14, item 8).

Every input here is refused with exit code 1 (Swift's code for a bad configuration), by
messages that each start with where the problem is (``file:line``, the file, or the
command-line option) and say what is wrong, never with a Python traceback: substitution
cycles, include cycles and chains, deep nesting, huge files, numbers out of range
(beyond Java's int, NaN, infinity, odd digits), bad types, unterminated text, binary
garbage, through swift.conf, the legacy files and command-line properties.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(600)

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")
INT_RANGE = "from 0 to 2147483647"
POS_RANGE = "from 1 to 2147483647"


@dataclass
class Case:
    name: str
    files: dict[str, str | bytes]
    args: list[str]
    where: str      # every line of the message starts with this
    says: str       # and the message says this
    extra: dict[str, str | bytes] = field(default_factory=dict)


def conf(name: str, text: str | bytes, where: str, says: str, **extra: str | bytes) -> Case:
    """A swift.conf case: ``t.conf`` given with ``-config``."""
    return Case(name, {"t.conf": text, **extra}, ["-config", "t.conf"], where, says)


def nested(opening: str, closing: str, depth: int) -> str:
    return "a: " + opening * depth + "1" + closing * depth + "\n"


def nested_entities(levels: int) -> str:
    """A sites.xml whose entities expand tenfold per level ("billion laughs" at 9)."""
    lines = ['<?xml version="1.0"?>', "<!DOCTYPE config [", ' <!ENTITY lol0 "lol">']
    lines += [f' <!ENTITY lol{n} "' + f"&lol{n - 1};" * 10 + '">' for n in range(1, levels)]
    lines += ["]>", f'<config><pool handle="x"><workdirectory>&lol{levels - 1};'
              "</workdirectory></pool></config>", ""]
    return "\n".join(lines)


def include_chain(length: int) -> dict[str, str]:
    files = {f"i{n}.conf": f'include "i{n + 1}.conf"\n' for n in range(1, length)}
    files[f"i{length}.conf"] = "sites: [local]\n"
    return files


CASES = [
    # substitution cycles: named, with the line of each key
    conf("cycle of two", "a: ${b}\nb: ${a}\n", "t.conf:1: a:",
         "substitution cycle a -> b -> a (a at t.conf:1, b at t.conf:2)"),
    conf("cycle of three", "x: 1\nc: ${a}\na: ${b}\nb: ${c}\n", "t.conf:2: c:",
         "substitution cycle c -> a -> b -> c"),
    conf("cycle through an object", "a: {x: ${b}}\nb: ${a}\n", "t.conf:1: a.x:",
         "substitution cycle a.x -> b -> a.x"),
    conf("cycle through a list", "a: ${b}\nb: [${a}]\n", "t.conf:1: a:",
         "substitution cycle a -> b -> a"),
    conf("value inside what it refers to", "a = { b = [ { c: ${a} } ] }\n", "t.conf:1:",
         "substitution cycle a.b.c -> a -> a.b.c"),
    conf("undefined substitution", "a: ${undefined}\n", "t.conf:1: a:",
         "no key undefined is defined"),
    conf("unterminated substitution", "a: ${\n", "t.conf:1:", "syntax error"),
    conf("append to a boolean", "sites: local\nsites += x\n", "t.conf:2:",
         "+= appends to a list"),
    # includes: cycles, chains, missing files
    conf("file includes itself", 'include "t.conf"\n', 't.conf:1: include "t.conf"',
         "include cycle t.conf:1 -> t.conf"),
    Case("include cycle through two files",
         {"t.conf": 'include "a.conf"\n', "a.conf": 'include "b.conf"\n',
          "b.conf": '\n\ninclude "a.conf"\n'}, ["-config", "t.conf"], "",
         'b.conf:3: include "a.conf": include cycle t.conf:1 -> '),
    Case("include chain too deep", {"t.conf": 'include "i1.conf"\n', **include_chain(20)},
         ["-config", "t.conf"], "", "includes nested more than 16 deep (t.conf:1 -> "),
    conf("include of a missing file", 'include "missing.conf"\n',
         't.conf:1: include "missing.conf"', "file not found"),
    # depth and size
    conf("objects nested 1000 deep", nested("{b: ", "}", 1000), "t.conf:1:",
         "objects and lists nested more than 32 deep"),
    conf("lists nested 1000 deep", nested("[", "]", 1000), "t.conf:1:",
         "objects and lists nested more than 32 deep"),
    conf("key path of 500 parts", "a." * 500 + "b: 1\n", "t.conf:1: a.a.a...:",
         "a key path of more than 32 parts"),
    conf("huge file", "# " + "x" * 300_000 + "\n", "t.conf:",
         "too large for a configuration file"),
    conf("too many top-level additions to one object",
         "".join(f"app.a{i}.executable: x\n" for i in range(1500)),
         "t.conf:1002:", "more than 1000 top-level statements add to objects made before"),
    conf("too many keys", "app {\n" + "".join(f"k{i}:1\n" for i in range(10_001))
         + "}\n", "t.conf:", "more than 10000 keys"),
    conf("huge list", "a: [" + ",".join(["1"] * 6000) + "]\n", "t.conf:1:",
         "more than 5000 values in lists"),
    # garbage and unterminated text
    conf("binary garbage", b"\xff\xfe\x00garbage\x80\n", "t.conf:",
         "not a UTF-8 text file (line 1: byte 0xff)"),
    conf("control bytes", "\x00\x01\x02\n", "t.conf:1:1:", "syntax error"),
    conf("unterminated string", 'a: "unterminated\n', "t.conf:1:", "syntax error"),
    conf("unterminated object", "a: {\n", "t.conf:2:1:", "syntax error"),
    conf("unterminated list", "sites: [local\n", "t.conf:2:1:", "syntax error"),
    conf("unterminated triple quote", 'a: """abc\n', "t.conf:1:", "syntax error"),
    conf("stray brace", "a: }\n", "t.conf:1:4:", "syntax error"),
    conf("a list, not an object", "[1, 2]\n", "t.conf:", "not a list"),
    # numbers out of range, or no numbers at all
    conf("count beyond 32 bits", "executionRetries: 99999999999999\n",
         "t.conf:1: executionRetries:", f"expected an integer {INT_RANGE}"),
    conf("one past Java's int", "maxForeachThreads: 2147483648\n",
         "t.conf:1: maxForeachThreads:", f"expected an integer {POS_RANGE}"),
    conf("site count as a float", "site.local.maxParallelTasks: 1e10\n",
         "t.conf:1: site.local.maxParallelTasks:", f"expected an integer {POS_RANGE}"),
    conf("negative throttle", "jobSubmitThrottle: -1\n", "t.conf:1: jobSubmitThrottle:",
         f'expected an integer {POS_RANGE} or "off"'),
    conf("throttle beyond 32 bits", "fileTransfersThrottle: 99999999999999999999\n",
         "t.conf:1: fileTransfersThrottle:", f'expected an integer {POS_RANGE} or "off"'),
    conf("NaN count", 'executionRetries: "NaN"\n', "t.conf:1: executionRetries:",
         f"expected an integer {INT_RANGE}"),
    conf("NaN factor", "siteScoreThrottlingFactor: NaN\n",
         "t.conf:1: siteScoreThrottlingFactor:", "expected a number from 0 to 2147483647"),
    conf("infinite factor", "siteScoreThrottlingFactor: Infinity\n",
         "t.conf:1: siteScoreThrottlingFactor:", "expected a number from 0 to 2147483647"),
    conf("overflowing float", "clusteringQueueDelay: 1e400\n",
         "t.conf:1: clusteringQueueDelay:", "expected a number from 0 to 2147483647"),
    conf("empty string count", 'executionRetries: ""\n', "t.conf:1: executionRetries:",
         f"expected an integer {INT_RANGE}"),
    conf("digits with underscores", 'replicationLimit: "1_000"\n',
         "t.conf:1: replicationLimit:", f"expected an integer {POS_RANGE}"),
    conf("non-ASCII digits", 'executionRetries: "\u0661\u0662"\n',
         "t.conf:1: executionRetries:", f"expected an integer {INT_RANGE}"),
    conf("back-off base of 0", "site.local.delayBase: 0\n", "t.conf:1: site.local.delayBase:",
         "expected a number from 1 to 100"),
    conf("wall time beyond 32 bits", 'app.x.maxWallTime: "99999999:00"\n',
         "t.conf:1: app.x.maxWallTime:", "of at most 596523:14:07"),
    conf("app count beyond 32 bits", "app.x.options.count: 99999999999\n",
         "t.conf:1: app.x.options.count:", f"expected an integer {POS_RANGE}"),
    conf("port out of range", 'TCPPortRange: "1, 99999"\n', "t.conf:1: TCPPortRange:",
         "0 < low <= high < 65536"),
    # types
    conf("boolean as a number", "lazyErrors: 3\n", "t.conf:1: lazyErrors:",
         "expected a boolean"),
    conf("sites as an object", "sites: {a: 1}\n", "t.conf:1: sites:",
         "expected a list of strings"),
    conf("count as a list", "executionRetries: [1]\n", "t.conf:1: executionRetries:",
         "not a list"),
    conf("escape characters in a key", '"\\u001b[31mred": 1\n', "t.conf:1: \\u001b[31mred:",
         "unknown key"),
    # command-line properties: a negative number is a value, and out of range
    Case("negative retries option", {}, ["-execution.retries", "-1"],
         "<Command Line> -execution.retries: executionRetries:",
         f'invalid value "-1", expected an integer {INT_RANGE}'),
    Case("huge foreach option", {}, ["-maxForeachThreads", "1e10"],
         "<Command Line> -maxForeachThreads: maxForeachThreads:",
         f"expected an integer {POS_RANGE}"),
    Case("NaN throttle option", {}, ["-throttle.submit", "nan"],
         "<Command Line> -throttle.submit: jobSubmitThrottle:",
         f'expected an integer {POS_RANGE} or "off"'),
    # the legacy files
    Case("properties count beyond 32 bits",
         {"p.properties": "# x\nexecution.retries=99999999999\n"},
         ["-properties", "p.properties"], "p.properties:2: executionRetries:",
         f"expected an integer {INT_RANGE}"),
    Case("properties throttle out of range",
         {"p.properties": "sites=x\nsite.x.jobmanager=local:local\nsite.x.taskThrottle=1e99\n"},
         ["-properties", "p.properties"], "p.properties:3: site.x.",
         f"expected an integer {POS_RANGE}"),
    Case("sites.xml jobThrottle NaN",
         {"s.xml": '<config>\n <pool handle="x">\n  <execution provider="local"/>\n'
                   '  <profile namespace="karajan" key="jobThrottle">nan</profile>\n'
                   ' </pool>\n</config>\n'},
         ["-sites.file", "s.xml"], "s.xml:4: profile karajan:jobThrottle:",
         "expected a number from 0 to 21474836.46"),
    Case("sites.xml jobThrottle infinite",
         {"s.xml": '<config>\n <pool handle="x">\n  <execution provider="local"/>\n'
                   '  <profile namespace="karajan" key="jobThrottle">1e400</profile>\n'
                   ' </pool>\n</config>\n'},
         ["-sites.file", "s.xml"], "s.xml:4: profile karajan:jobThrottle:",
         "expected a number from 0 to 21474836.46"),
    Case("sites.xml coaster maxtime infinite",
         {"s.xml": '<config>\n <pool handle="x">\n'
                   '  <execution provider="coaster" jobmanager="local:local" url="h"/>\n'
                   '  <profile namespace="globus" key="maxtime">inf</profile>\n'
                   '  <workdirectory>/tmp</workdirectory>\n </pool>\n</config>\n'},
         ["-sites.file", "s.xml"], "s.xml:4:", "maxJobTime"),
    Case("sites.xml entity expansion", {"s.xml": nested_entities(3)},
         ["-sites.file", "s.xml"], "s.xml:3: XML entity 'lol0':",
         "a site catalog may not declare entities"),
    Case("sites.xml binary garbage", {"s.xml": b"<config>\x00\xff</config>\n"},
         ["-sites.file", "s.xml"], "s.xml:", "not"),
    Case("tc.data count beyond 32 bits",
         {"tc.data": 'local echo /bin/echo INSTALLED INTEL32::LINUX '
                     'globus::count="99999999999"\n'},
         ["-tc.file", "tc.data"], "tc.data:1: site.local.app.echo.options.count:",
         f"expected an integer {POS_RANGE}"),
]


def environment(cwd: Path) -> dict[str, str]:
    home = cwd.parent / f"{cwd.name}-home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home))
    env.pop("SWIFT_SITE_CONF", None)
    env.pop("SWIFT_CONF_PATH", None)
    return env


def write_files(cwd: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        target = cwd / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def swiftnb(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SWIFTNB, *args], cwd=cwd, capture_output=True, text=True,
                          errors="replace", timeout=120, env=environment(cwd))


def assert_refused(result: subprocess.CompletedProcess, case: Case, *,
                   prefix: str = "") -> None:
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    assert "\x1b" not in result.stderr  # a key's escape characters are not written raw
    lines = [line.strip() for line in result.stderr.splitlines()
             if line.strip() and not line.startswith("Warning: ")]
    if prefix:
        assert lines[0] == prefix
        lines = lines[1:]
    assert lines, result.stderr
    for line in lines:
        assert line.startswith(case.where), result.stderr
    assert case.says in result.stderr, result.stderr


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_check_config_refuses_with_a_located_message(tmp_path, case):
    write_files(tmp_path, case.files)
    assert_refused(swiftnb(tmp_path, "check-config", *case.args), case)


RUN_CASES = [case for case in CASES if case.name in (
    "cycle of two", "file includes itself", "objects nested 1000 deep", "count beyond 32 bits",
    "negative retries option", "sites.xml jobThrottle NaN", "binary garbage")]


@pytest.mark.parametrize("case", RUN_CASES, ids=[case.name for case in RUN_CASES])
def test_a_run_refuses_the_same_before_it_starts(tmp_path, case):
    """``swiftnb run`` reads the configuration as check-config does: the same message,
    exit 1, and no run directory."""
    write_files(tmp_path, case.files)
    (tmp_path / "q.swift").write_text('trace("never");\n')
    result = swiftnb(tmp_path, "run", *case.args, "q.swift")
    assert_refused(result, case, prefix="Could not start execution:")
    assert "never" not in result.stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("run")]
