"""Cross-check the Java emulations against a real JVM when one is installed.

Swift/K was a Java program: ``trace`` printed doubles with ``Double.toString``,
``format()`` was ``String.format`` and ``strsplit``/``regexp`` were ``String.split`` /
``replaceFirst``.  With a JDK on the machine these tests compare our Python renderings
with Java's on a few thousand generated values; without one they skip (the exact cases
that matter are also pinned in test_formatting.py).
"""

from __future__ import annotations

import random
import shutil
import struct
import subprocess

import pytest

from swiftnb.engine.builtins.jregex import java_split, replace_first
from swiftnb.engine.data import BuiltinError
from swiftnb.engine.formatting import java_double, java_format

JAVA = shutil.which("java")
JAVAC = shutil.which("javac")
pytestmark = pytest.mark.skipif(not (JAVA and JAVAC), reason="no JDK (java/javac) on PATH")

ORACLE = r"""
import java.io.*;
public class Oracle {
  public static void main(String[] a) throws Exception {
    BufferedReader br = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    String l; StringBuilder sb = new StringBuilder();
    while ((l = br.readLine()) != null) {
      String[] p = l.split("\t", -1);
      String r;
      try {
        switch (p[0]) {
          case "D": r = Double.toString(Double.longBitsToDouble(Long.parseLong(p[1]))); break;
          case "Fd": r = String.format(p[1], Double.longBitsToDouble(Long.parseLong(p[2]))); break;
          case "Fi": r = String.format(p[1], Integer.parseInt(p[2])); break;
          case "S": r = String.join("|", p[1].split(p[2])) + "#" + p[1].split(p[2]).length; break;
          case "R": r = p[1].replaceFirst(p[2], p[3]); break;
          default: r = "?";
        }
      } catch (Exception e) { r = "ERR"; }
      sb.append(r.replace("\n", "\\n")).append('\n');
    }
    System.out.print(sb);
  }
}
"""


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    d = tmp_path_factory.mktemp("oracle")
    (d / "Oracle.java").write_text(ORACLE)
    subprocess.run([JAVAC, "Oracle.java"], cwd=d, check=True, timeout=120)

    def ask(rows: list[str]) -> list[str]:
        res = subprocess.run([JAVA, "-cp", str(d), "Oracle"], input="\n".join(rows) + "\n",
                             capture_output=True, text=True, timeout=120, check=True)
        return res.stdout.splitlines()

    return ask


def _bits(d: float) -> str:
    return str(struct.unpack("<q", struct.pack("<d", d))[0])


@pytest.mark.timeout(240)
def test_double_to_string_matches_java(oracle):
    rng = random.Random(7)
    vals = [0.1 * i for i in range(50)] + [1 / 3, 2 / 3, 1e7, 9999999.0, 1e-3, 9.99e-4, 1e16, 1e21]
    for _ in range(5000):
        r = rng.random()
        if r < 0.3:
            vals.append(rng.uniform(-1e6, 1e6))
        elif r < 0.5:
            vals.append(round(rng.uniform(-1000, 1000), rng.randint(0, 6)))
        elif r < 0.7:
            vals.append(rng.random() * 10 ** rng.randint(-12, 18))
        elif r < 0.85:
            vals.append(float(rng.randint(2**52, 2**63 - 1)))
        else:
            vals.append(rng.randint(1, 1000) / rng.randint(1, 1000))
    got = oracle([f"D\t{_bits(v)}" for v in vals])
    bad = [(v, j, java_double(v)) for v, j in zip(vals, got) if j != java_double(v)]
    assert bad == []


@pytest.mark.timeout(240)
def test_string_format_matches_java(oracle):
    rng = random.Random(8)
    fd = ["%f", "%.2f", "%.0f", "%.1f", "%10.3f", "%-10.3f|", "%010.2f", "%+.3f", "%e", "%.3e",
          "%E", "%g", "%.3g", "%G", "%,.2f", "%s", "%12s"]
    fi = ["%d", "%5d", "%-5d|", "%05d", "%x", "%X", "%o", "%,d", "%+d", "% d", "%(d", "%s", "%#x"]
    cases: list[tuple[str, str, object]] = []
    for _ in range(1500):
        r = rng.random()
        v = (rng.uniform(-1e4, 1e4) if r < 0.4 else round(rng.uniform(-100, 100), rng.randint(0, 4))
             if r < 0.7 else rng.random() * 10 ** rng.randint(-8, 12))
        cases.append(("Fd", rng.choice(fd), v))
    for _ in range(500):
        cases.append(("Fi", rng.choice(fi), rng.randint(-100000, 100000)))
    cases += [("Fd", "%.1f", 0.25), ("Fd", "%.1f", 0.15), ("Fd", "%.2f", 1.005), ("Fd", "%.3g", 99.99)]
    rows = [f"{k}\t{f}\t{_bits(v) if k == 'Fd' else v}" for k, f, v in cases]
    got = oracle(rows)
    bad = []
    for (_k, f, v), j in zip(cases, got):
        try:
            mine = java_format(f, [v]).replace("\n", "\\n")
        except BuiltinError:
            mine = "ERR"
        if mine != j:
            bad.append((f, v, j, mine))
    assert bad == []


def test_split_and_replace_first_match_java(oracle):
    cases = [("a,b,,c", ","), ("a,b,c,,", ","), ("abc", ","), ("", ","), (" a b", " "),
             ("abc", ""), ("my name is John", "\\s"), ("a1b22c333", "[0-9]+"), ("a::b:", ":"),
             ("x--y", "-"), ("tab;here", ";"), ("aaa", "a"), ("a.b.c", "\\."),
             ("one  two", " +"), ("key=value=x", "=")]
    got = oracle([f"S\t{s}\t{p}" for s, p in cases])
    mine = ["|".join(java_split(s, p)) + f"#{len(java_split(s, p))}" for s, p in cases]
    assert mine == got
    rcases = [("abc123def", "[0-9]+", "<$0>"), ("abcdefghi", "c(def)g", "monkey"),
              ("a1b2", "([a-z])([0-9])", "$2$1"), ("nomatch", "x", "y"), ("price", "p", "\\$"),
              ("2016-04-27", "(\\d+)-(\\d+)-(\\d+)", "$3/$2/$1"), ("aaa", "a*", "X"),
              ("file.txt", "\\.txt$", ".out"), ("CamelCase", "(?<first>[A-Z])", "_${first}")]
    got = oracle([f"R\t{s}\t{p}\t{r}" for s, p, r in rcases])
    assert [replace_first(s, p, r) for s, p, r in rcases] == got
