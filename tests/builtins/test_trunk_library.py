"""Trunk's library v2 through the real ``swiftnb`` command: assertion messages,
``read``/``write`` errors, ``import "stdlib.v2";`` switches, and the random numbers
cross-checked against trunk's algorithm run on a JVM (skipped without a JDK)."""

from __future__ import annotations

import math
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.engine.builtins.numbers import random_float, random_gaussian, random_int
from swiftnb.engine.formatting import java_str

V2 = 'import "stdlib.v2";\n'


def run(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "s.swift").write_text(text)
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "s.swift"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("stmt, message", [
    ('assertEqual("a", "b");', 'assertion failed ("a" == "b")'),
    ("assertEqual(1, 2, \"ints\");", "ints (1 == 2)"),
    ("assertEqual(1, 2.5);", "assertion failed (1.0 == 2.5)"),
    ("assertEqual(true, false);", "assertion failed (true == false)"),
    ("assertAlmostEqual(1.0, 1.5, 0.25);", "assertion failed (1.0 == 1.5 +/- 0.25)"),
    ("assertLT(2, 2);", "assertion failed (2 < 2)"),
    ("assertLTE(3.5, 2);", "assertion failed (3.5 <= 2.0)"),
    ("assertGT(1, 2, \"gt\");", "gt (1 > 2)"),
    ("assertGTE(1, 2);", "assertion failed (1 >= 2)"),
    ("assert(1 > 2);", "assertion failed"),
])
def test_assertion_messages(tmp_path: Path, stmt: str, message: str) -> None:
    r = run(tmp_path, V2 + stmt + "\n")
    assert r.returncode == 2, r.stderr
    assert f"Execution failed:\n{message}\n" in r.stderr
    assert "s.swift, line: 2" in r.stderr
    assert "swift: assert failed" not in r.stdout
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("text, message", [
    (V2 + "assert(1);\n",
     "s.swift:2:8: Wrong type for parameter 0 of assert; expected boolean (the assert of "
     "stdlib.v2), got int"),
    (V2 + 'assertEqual("a", 1);\n',
     "s.swift:2:18: Wrong type for parameter 1 of assertEqual; expected string like "
     "parameter 0, got int"),
    (V2 + 'type file;\nfile f <"f">;\nf = write(1, format = "XML");\n',
     "s.swift:4:23: Unsupported serialization format: 'XML' (accepted: None, FieldAndValue, "
     "FV, CSV)"),
    (V2 + 'type file;\nfile f <"f">;\nint i = read(f, "Json");\n',
     "s.swift:4:17: Unsupported de-serialization format: 'Json'"),
    (V2 + 'type file;\nfile f <"f">;\nf = write(1, fmt = "CSV");\n',
     "s.swift:4:14: Illegal keyword argument: 'fmt' (builtin write takes format, options "
     "by keyword)"),
])
def test_compile_errors(tmp_path: Path, text: str, message: str) -> None:
    r = run(tmp_path, text)
    assert r.returncode == 3
    assert message in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("text, message", [
    ('string fm = "XML";\nfile f <"f.txt">;\nf = write(1, format = fm);\n',
     "Unsupported serialization format: 'XML' (accepted: None, FieldAndValue, FV, CSV)"),
    ('int[] a = [1, 2];\nfile f <"f.txt">;\nf = write(a);\n',
     "This format only supports primitive data"),
    ('int i = read("missing.txt");\n', "read: cannot read missing.txt"),
    ('type p { int a; int b; }\nfile f <"f.csv">;\nf = write("a\\tc\\n1\\t2\\n");\n'
     'p v = read(f, "CSV");\ntrace(v.a);\n',
     "File header does not match type. Expected the following header items: [a, b]. "
     "Instead, the header was: [a, c]"),
])
def test_read_write_errors(tmp_path: Path, text: str, message: str) -> None:
    r = run(tmp_path, V2 + "type file;\n" + text)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_the_import_switches_constants_and_assert(tmp_path: Path) -> None:
    r = run(tmp_path, V2 + 'string E = "mine";\ntrace(PI, E);\nassert(PI < 3.0);\n')
    assert r.returncode == 2, r.stderr
    assert r.stdout == "SwiftScript trace: 3.141592653589793, mine\n"
    assert "Execution failed:\nassertion failed\n" in r.stderr
    # without the import: no constants, and 0.96's assert
    r = run(tmp_path, "assert(0);\n")
    assert (r.returncode, r.stdout) == (2, "swift: assert failed: Assertion failed\n")
    r = run(tmp_path, "trace(PI);\n")
    assert r.returncode == 3
    assert "s.swift:1:7: Variable PI was not declared in this scope." in r.stderr


# ------------------------------------------------------------------ random numbers

JDK = shutil.which("java") and shutil.which("javac")

# trunk's algorithm (Random.java of swiftscript/v2), written out for the JVM
ORACLE = r"""
import java.security.MessageDigest;
public class TrunkRandom {
  static MessageDigest md;
  static void put(int n) { for (int i = 0; i < 4; i++) { md.update((byte) (n % 0xff)); n >>= 8; } }
  static byte[] sha(int seed, int seq) { md.reset(); put(seed); put(seq); return md.digest(); }
  static long first8(byte[] b) { long n = 0; for (int i = 0; i < 8; i++) { n <<= 8; n += b[i] & 0xff; } return n; }
  static double unit(byte[] b, int s) {
    long n = 0; for (int i = 0; i < 7; i++) { n <<= 8; n += b[i + s] & 0xff; }
    return ((double) (n & 0xfffffffffffffL)) / 0xfffffffffffffL;
  }
  static int rint(int seed, int seq, int lo, int hi) {
    int span = hi - lo; long mask = 1; while (mask < span) { mask <<= 1; mask += 1; }
    long h = first8(sha(seed, seq)); int step = 0;
    while ((h & mask) >= span) { step++; h ^= first8(sha(seed, seq + step)); }
    return (int) (h & mask) + lo;
  }
  static double gauss(int seed, int seq) {
    int m = seq - (seq % 2); int step = 0; byte[] b = sha(seed, m); double u1, u2;
    while (true) {
      u1 = unit(b, 0); u2 = unit(b, 8); if (u1 > 0) break;
      byte[] o = sha(seed, m + (step++)); for (int i = 0; i < b.length; i++) b[i] = (byte) (b[i] ^ o[i]);
    }
    double d = seq % 2 == 0 ? Math.cos(Math.PI * 2 * u2) : Math.sin(Math.PI * 2 * u2);
    return d * Math.sqrt(-2.0 * Math.log(u1));
  }
  public static void main(String[] a) throws Exception {
    md = MessageDigest.getInstance("SHA-1");
    java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null;) {
      String[] w = line.split(" ");
      int seed = Integer.parseInt(w[0]), seq = Integer.parseInt(w[1]);
      int lo = Integer.parseInt(w[2]), hi = Integer.parseInt(w[3]);
      System.out.println(rint(seed, seq, lo, hi) + " " + ((double) lo + (hi - lo) * unit(sha(seed, seq), 0))
                         + " " + gauss(seed, seq));
    }
  }
}
"""


@pytest.mark.skipif(not JDK, reason="no JDK (java/javac) on PATH")
def test_random_numbers_match_trunks_algorithm_on_a_jvm(tmp_path: Path) -> None:
    (tmp_path / "TrunkRandom.java").write_text(ORACLE)
    subprocess.run(["javac", "TrunkRandom.java"], cwd=tmp_path, check=True, timeout=120)
    rng = random.Random(16)
    cases = [(rng.randint(-2**31, 2**31 - 1), rng.randint(-2**31, 2**31 - 2),
              *sorted(rng.sample(range(-10**6, 10**6), 2))) for _ in range(300)]
    cases += [(0, 0, 0, 1), (-1, -1, -3, 3), (7, 1, 0, 2)]
    stdin = "".join(" ".join(map(str, c)) + "\n" for c in cases)
    out = subprocess.run(["java", "-cp", ".", "TrunkRandom"], cwd=tmp_path, input=stdin,
                         capture_output=True, text=True, check=True, timeout=120).stdout
    for (seed, seq, lo, hi), line in zip(cases, out.splitlines(), strict=True):
        want_int, want_float, want_gauss = line.split()
        assert str(random_int(None, seed, seq, lo, hi)) == want_int
        assert java_str(random_float(None, seed, seq, float(lo), float(hi))) == want_float
        # Java's Math.sin/cos/log may differ from C's libm in the last place
        got = random_gaussian(None, seed, seq)
        assert abs(got - float(want_gauss)) <= 2 * math.ulp(float(want_gauss))
