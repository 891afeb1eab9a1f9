"""Broken configuration files: each gets one clear line (file, key, what is wrong), exit 1,
and no run directory work is lost (nothing runs)."""

from __future__ import annotations

import pytest

from robusthelp import HELLO

pytestmark = pytest.mark.timeout(60)

BINARY = b"\xff\xfe\x00garbage\n"


def test_binary_swift_conf(tmp_path, write, cli):
    write("hello.swift", HELLO)
    write("bin.conf", BINARY)
    r = cli("run", "-config", "bin.conf", "hello.swift")
    assert r.returncode == 1
    assert "bin.conf: cannot read configuration file: not a UTF-8 text file (line 1: byte 0xff)" \
        in r.stderr
    assert not (tmp_path / "hello.txt").exists()


def test_latin1_comment_names_the_line(tmp_path, write, cli):
    write("hello.swift", HELLO)
    write("l1.conf", "lazyErrors: true\n# caf\xe9\n".encode("latin-1"))
    r = cli("check-config", "-config", "l1.conf")
    assert r.returncode == 1
    assert "line 2: byte 0xe9" in r.stderr


def test_binary_include(tmp_path, write, cli):
    write("hello.swift", HELLO)
    write("bin.conf", BINARY)
    write("main.conf", 'include "bin.conf"\n')
    r = cli("run", "-config", "main.conf", "hello.swift")
    assert r.returncode == 1
    assert 'main.conf:1: include "bin.conf": cannot read' in r.stderr
    assert "not a UTF-8 text file" in r.stderr


@pytest.mark.parametrize("option,name,what", [
    ("-tc.file", "bin.tc", "transformation catalog"),
    ("-config", "bin.properties", "properties"),
])
def test_binary_legacy_files(tmp_path, write, cli, option, name, what):
    write("hello.swift", HELLO)
    write("sites.xml", '<config><pool handle="localhost"><execution provider="local"/>'
                       '<workdirectory>work</workdirectory></pool></config>')
    write(name, BINARY)
    extra = ["-sites.file", "sites.xml"] if option == "-tc.file" else []
    r = cli("run", *extra, option, name, "hello.swift")
    assert r.returncode == 1
    assert f"{name}: cannot read {what}: not a UTF-8 text file" in r.stderr


def test_coaster_prefetch_auto_in_swift_conf(tmp_path, write, cli):
    write("c.conf", 'sites: c\nsite.c { execution { type: coaster, jobManager: "local:local",'
                    ' options { prefetch: auto, planInterval: 0.5, maxWorkerIdleTime: 30 } }\n'
                    '  workDirectory: w }\n')
    assert cli("check-config", "-config", "c.conf").returncode == 0
    write("c.conf", 'sites: c\nsite.c { execution { type: coaster, jobManager: "local:local",'
                    ' options { prefetch: lots } }\n  workDirectory: w }\n')
    r = cli("check-config", "-config", "c.conf")
    assert r.returncode == 1  # the coaster provider's own check of its options
    assert ("c.conf:2: invalid value 'lots' for property 'site.c.execution.options.prefetch': "
            'expected an integer from 0 to 2147483647 or "auto"') in r.stderr


@pytest.mark.parametrize("value", ["1e12", "nan", '"exp:inf"', '"uniform:1:1e9"'])
def test_sim_durations_must_be_sensible(tmp_path, write, cli, value):
    write("s.conf", "sites: g\nsite.g { execution { type: sim, options { taskDuration: "
                    + value + " } }\n  workDirectory: w }\n")
    r = cli("check-config", "-config", "s.conf")
    assert r.returncode == 1
    assert "site.g.execution.options.taskDuration: invalid value" in r.stderr


def test_convert_config_output_errors(tmp_path, write, cli):
    write("sites.xml", '<config><pool handle="x"><execution provider="local"/>'
                       '<workdirectory>w</workdirectory></pool></config>')
    before = (tmp_path / "sites.xml").read_text()
    r = cli("convert-config", "-sites.file", "sites.xml", "-out", "sites.xml")
    assert r.returncode == 1 and "is the -sites.file being converted" in r.stderr
    assert (tmp_path / "sites.xml").read_text() == before
    r = cli("convert-config", "-sites.file", "sites.xml", "-out", "no/such/dir/x.conf")
    assert r.returncode == 1 and "cannot write no/such/dir/x.conf" in r.stderr
    r = cli("convert-config", "-sites.file")
    assert r.returncode == 1 and "-sites.file needs a file name" in r.stderr
    r = cli("convert-config", "-sites.file", "sites.xml", "-out", "x.conf")
    assert r.returncode == 0 and "site.x" in (tmp_path / "x.conf").read_text()


def test_sim_sites_mixed_with_real_ones_warn(tmp_path, write, cli):
    write("hello.swift", HELLO)
    write("mix.conf", "sites: [local, grid]\nsite.grid { execution { type: sim, options "
                      "{ taskDuration: 1 } }, app.ALL.executable: \"*\" }\n")
    r = cli("run", "-config", "mix.conf", "hello.swift")
    assert r.returncode == 0, r.stderr
    text = "simulated site grid runs in real time (not virtual time) because local is real"
    assert f"Warning: {text}" in r.stderr
    assert text in (tmp_path / "run001" / "hello-run001.log").read_text()
    write("sim.conf", "sites: [grid]\nsite.grid { execution { type: sim, options "
                      "{ taskDuration: 1 } }, app.ALL.executable: \"*\" }\n")
    r = cli("run", "-config", "sim.conf", "hello.swift")
    assert r.returncode == 0 and "real time" not in r.stderr


def test_unknown_policy_option_names_the_key(tmp_path, write, cli):
    write("hello.swift", HELLO)
    write("p.conf", "sites: [a, b]\nsite.a { execution.type: local, workDirectory: w }\n"
                    "site.b { execution.type: local, workDirectory: w }\n"
                    "siteSelectionPolicy: sitesets\nsiteSelectionOptions.selectt: best\n")
    r = cli("run", "-config", "p.conf", "hello.swift")
    assert r.returncode == 1
    assert ('siteSelectionOptions.selectt: not an option of siteSelectionPolicy "sitesets"'
            in r.stderr) and "did you mean select?" in r.stderr
    assert not (tmp_path / "hello.txt").exists()


@pytest.mark.parametrize("value", ["-5", "1e400"])
def test_bad_walltime_numbers(tmp_path, write, cli, value):
    write("w.conf", f"site.local.app.ALL.maxWallTime: {value}\n")
    r = cli("check-config", "-config", "w.conf")
    assert r.returncode == 1
    assert 'maxWallTime: invalid value' in r.stderr and 'expected a time ("MM"' in r.stderr


SITES_XML = ('<config><pool handle="localhost"><execution provider="local"/>'
             '<workdirectory>work</workdirectory></pool></config>\n')


@pytest.mark.parametrize("option,name,text,says", [
    ("-sites.file", "swift.conf", "sites: local\n", "this is not a site catalog (sites.xml): "
     "it looks like a swift.conf; give it with -config"),
    ("-sites.file", "tc.data", "localhost echo /bin/echo\n", "this is not a site catalog "
     "(sites.xml): it looks like a transformation catalog; give it with -tc.file"),
    ("-tc.file", "sites.xml", SITES_XML, "this is not a transformation catalog: it looks "
     "like an XML site catalog; give it with -sites.file"),
])
def test_a_file_given_to_the_wrong_option_is_named(tmp_path, write, cli, option, name, text,
                                                     says):
    write("hello.swift", HELLO)
    write(name, text)
    extra = ["-sites.file", "ok.xml"] if option == "-tc.file" else []
    if extra:
        write("ok.xml", SITES_XML)
    r = cli("run", *extra, option, name, "hello.swift")
    assert r.returncode == 1
    assert f"{name}: {says}" in r.stderr


def test_slash_in_a_tc_data_name_is_an_error_not_a_traceback(tmp_path, write, cli):
    write("tc.data", "localhost\t/bin/echo\tlocalhost\n")
    r = cli("check-config", "-tc.file", "tc.data")
    assert r.returncode == 1
    assert "tc.data:1: '/bin/echo': not a valid transformation name" in r.stderr


def test_sim_speed_zero_and_per_app_durations(tmp_path, write, cli):
    write("s.conf", "sites: g\nsite.g { execution { type: sim, options { speed: 0 } }\n"
                    "  workDirectory: w }\n")
    r = cli("check-config", "-config", "s.conf")
    assert r.returncode == 1
    assert "site.g.execution.options.speed: invalid value 0, expected a number greater than 0" \
        in r.stderr
    write("s.conf", "sites: g\nsite.g { execution { type: sim, options { taskDuration: "
                    '{ALL: 10, blast: "exp:60"} } }\n  workDirectory: w }\n')
    assert cli("check-config", "-config", "s.conf").returncode == 0
    write("s.conf", "sites: g\nsite.g { execution { type: sim, options { taskDuration: "
                    '{ALL: 10, blast: "exp:x"} } }\n  workDirectory: w }\n')
    r = cli("check-config", "-config", "s.conf")
    assert r.returncode == 1 and "(for app blast)" in r.stderr


def test_coaster_plan_interval_zero_is_refused(tmp_path, write, cli):
    write("c.conf", 'sites: c\nsite.c { execution { type: coaster, jobManager: "local:local",'
                    ' options { planInterval: 0 } }\n  workDirectory: w }\n')
    r = cli("check-config", "-config", "c.conf")
    assert r.returncode == 1
    assert ("c.conf:2: invalid value for property 'site.c.execution.options.planInterval': "
            "must be greater than 0") in r.stderr
