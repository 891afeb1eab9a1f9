"""The Shell contract, checked on both shells: LocalShell (real subprocesses) and SSHShell
(a real sshd on 127.0.0.1, tests/sshd.py).  What differs between them (connections, host
keys, config files) is in test_sshshell.py."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from swiftnb.execution.shell import CommandResult, LocalShell, Shell, ShellError, ShellFailure
from swiftnb.execution.sshshell import SSHShell

#: no test sees the tester's own ~/.ssh or agent (tests/sshd.py)
pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("no_personal_ssh")]

AWKWARD = "a b 'single' \"double\" ;x $HOME\nnewline.txt"


@dataclass
class Case:
    """A shell to test and a fresh directory for the test on the shell's machine."""

    make: Callable[[], Shell]
    work: str


@pytest.fixture(params=["local", "ssh"])
def case(request, tmp_path) -> Case:
    if request.param == "local":
        work = tmp_path / "work"
        work.mkdir()
        return Case(LocalShell, str(work))
    sshd = request.getfixturevalue("sshd")
    return Case(lambda: SSHShell(sshd.host, port=sshd.port, user=sshd.user,
                                 identity_files=[str(sshd.client_key)],
                                 known_hosts=str(sshd.known_hosts)),
                f"{sshd.remote_work}/{request.node.name.replace('[', '-').rstrip(']')}"
                f"-{secrets.token_hex(3)}")


def on(case: Case, body: Callable[[Shell], Awaitable[None]]) -> None:
    """Run ``body`` with a shell whose work directory exists, then close the shell."""
    async def main() -> None:
        shell = case.make()
        try:
            await shell.makedirs(case.work)
            await body(shell)
        finally:
            await shell.close()
    asyncio.run(main())


def _processes_with(token: str) -> list[int]:
    """Live processes of this machine whose command line holds ``token`` (both shells run
    their commands here)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if token.encode() in cmdline and stat[stat.rindex(")") + 2] not in "ZX":
            found.append(int(entry))
    return found


def _gone(token: str, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _processes_with(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_run_returns_status_and_both_streams(case):
    async def body(shell: Shell) -> None:
        r = await shell.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
        assert r == CommandResult(3, "out\n", "err\n")
    on(case, body)


def test_arguments_are_an_argv_never_a_shell_string(case):
    args = ["a b", "it's", "x;y", "$HOME", "`id`", "new\nline", "*", ""]

    async def body(shell: Shell) -> None:
        r = await shell.run(["printf", "%s|", *args])
        assert r.returncode == 0
        assert r.stdout == "|".join(args) + "|"
    on(case, body)


def test_input_is_the_commands_stdin_and_none_means_empty(case):
    async def body(shell: Shell) -> None:
        assert (await shell.run(["cat"], input=b"line 1\nline 2\n")).stdout == "line 1\nline 2\n"
        assert (await shell.run(["cat"])).stdout == ""  # EOF at once, no hang
    on(case, body)


def test_cwd_and_a_missing_cwd(case):
    async def body(shell: Shell) -> None:
        assert (await shell.run(["pwd"], cwd=case.work)).stdout.strip() == case.work
        with pytest.raises(ShellError) as err:
            await shell.run(["pwd"], cwd=f"{case.work}/no such dir")
        assert err.value.kind is ShellFailure.REMOTE
        assert "no such dir" in str(err.value)
    on(case, body)


def test_a_missing_program_exits_127(case):
    async def body(shell: Shell) -> None:
        r = await shell.run(["no-such-program-swiftnb"])
        assert r.returncode == 127
        assert "no-such-program-swiftnb" in r.stderr
    on(case, body)


def test_a_timeout_kills_the_command_and_what_it_started(case):
    token = f"{secrets.randbelow(10**6)}"
    first, second = f"1000.{token}1", f"1000.{token}2"

    async def body(shell: Shell) -> None:
        with pytest.raises(ShellError) as err:
            await shell.run(["sh", "-c", f"sleep {first} & sleep {second}; wait"], timeout=0.5)
        assert err.value.kind is ShellFailure.TIMEOUT
        assert err.value.retryable
        assert "0.5 s" in str(err.value)
    on(case, body)
    assert _gone(first) and _gone(second), "a timed-out command was left running"


def test_put_get_round_trip_and_get_replaces_atomically(case, tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(300_000))
    back = tmp_path / "back.bin"
    back.write_text("old content")

    async def body(shell: Shell) -> None:
        await shell.put(str(src), f"{case.work}/data.bin")
        await shell.get(f"{case.work}/data.bin", str(back))
    on(case, body)
    assert back.read_bytes() == src.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".swiftnb-")] == []


def test_an_awkward_file_name_goes_there_and_back_intact(case, tmp_path):
    src = tmp_path / AWKWARD
    src.write_text("awkward\n")
    back = tmp_path / ("back " + AWKWARD)

    async def body(shell: Shell) -> None:
        remote = f"{case.work}/{AWKWARD}"
        await shell.put(str(src), remote)
        assert await shell.exists(remote)
        listing = await shell.run(["ls", "-1b", case.work])  # -b: escapes, one name a line
        assert listing.stdout.count("\n") == 1
        assert (await shell.run(["cat", remote])).stdout == "awkward\n"
        await shell.get(remote, str(back))
    on(case, body)
    assert back.read_text() == "awkward\n"


def test_makedirs_exists_remove_tree(case, tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("x")

    async def body(shell: Shell) -> None:
        deep = f"{case.work}/a/b c/d"
        await shell.makedirs(deep)
        await shell.makedirs(deep)  # mkdir -p: no error when it exists
        assert await shell.exists(deep)
        await shell.put(str(f), f"{deep}/f.txt")
        assert await shell.exists(f"{deep}/f.txt")
        await shell.remove_tree(f"{case.work}/a")
        assert not await shell.exists(f"{case.work}/a")
        await shell.remove_tree(f"{case.work}/a")  # rm -rf: no error when absent
        await shell.put(str(f), f"{case.work}/single")
        await shell.remove_tree(f"{case.work}/single")  # a plain file too
        assert not await shell.exists(f"{case.work}/single")
    on(case, body)


def test_get_of_a_missing_file_is_remote_and_leaves_nothing_behind(case, tmp_path):
    out = tmp_path / "out"
    out.mkdir()

    async def body(shell: Shell) -> None:
        with pytest.raises(ShellError) as err:
            await shell.get(f"{case.work}/absent.txt", str(out / "absent.txt"))
        assert err.value.kind is ShellFailure.REMOTE
        assert not err.value.retryable
        assert "absent.txt" in str(err.value)
    on(case, body)
    assert list(out.iterdir()) == []


def test_a_full_disk_is_remote(case, tmp_path):
    src = tmp_path / "src"
    src.write_bytes(b"x" * 100_000)

    async def body(shell: Shell) -> None:
        with pytest.raises(ShellError) as err:
            await shell.put(str(src), "/dev/full")  # every write: ENOSPC
        assert err.value.kind is ShellFailure.REMOTE
        assert "/dev/full" in str(err.value)
    on(case, body)


def test_a_started_process_talks_through_its_streams(case):
    async def body(shell: Shell) -> None:
        script = 'while read l; do echo "got $l $V"; done; echo bye >&2; exit 4'
        proc = await shell.start(["sh", "-c", script], cwd=case.work, env={"V": "a b;c"})
        await proc.write(b"one\ntwo\n")
        assert await proc.readline() == b"got one a b;c\n"
        assert await proc.readline() == b"got two a b;c\n"
        proc.close_stdin()
        assert await proc.readline() == b""
        assert await proc.wait() == 4
        assert await proc.read_stderr() == "bye\n"
    on(case, body)


def test_a_started_process_ends_on_a_signal(case):
    async def body(shell: Shell) -> None:
        proc = await shell.start(["sh", "-c", "echo ready; exec sleep 30"])
        assert await proc.readline() == b"ready\n"
        proc.send_signal("TERM")
        assert await proc.wait() == 128 + 15
        proc.send_signal("KILL")  # after the end: nothing happens
        with pytest.raises(ValueError):
            proc.send_signal("NO-SUCH-SIGNAL")
    on(case, body)


def test_many_commands_at_once(case):
    async def body(shell: Shell) -> None:
        results = await asyncio.gather(*(shell.run(["echo", str(i)]) for i in range(40)))
        assert [r.stdout for r in results] == [f"{i}\n" for i in range(40)]
    on(case, body)


def test_local_shell_is_named_this_machine_and_not_writable_is_remote(tmp_path):
    async def main() -> None:
        shell = LocalShell()
        assert shell.name == "this machine"
        src = tmp_path / "f"
        src.write_text("x")
        with pytest.raises(ShellError) as err:
            await shell.put(str(src), "/proc/no-such-dir/f")
        assert err.value.kind is ShellFailure.REMOTE
        assert err.value.host == "this machine"
        assert "/proc/no-such-dir/f" in str(err.value)
        with pytest.raises(ShellError) as err:
            await shell.makedirs("/proc/no-such-dir/x")
        assert err.value.kind is ShellFailure.REMOTE
        with pytest.raises(ShellError) as err:
            await shell.start(["no-such-program-swiftnb"])
        assert err.value.kind is ShellFailure.REMOTE
    asyncio.run(main())


@pytest.mark.parametrize("kind,retryable", [
    (ShellFailure.UNREACHABLE, True), (ShellFailure.CONNECTION_LOST, True),
    (ShellFailure.TIMEOUT, True), (ShellFailure.AUTH_REFUSED, False),
    (ShellFailure.HOST_KEY_UNKNOWN, False), (ShellFailure.HOST_KEY_CHANGED, False),
    (ShellFailure.REMOTE, False), (ShellFailure.CONFIG, False)])
def test_which_kinds_are_retryable(kind, retryable):
    err = ShellError(kind, "h:22", "message")
    assert err.retryable is retryable
    assert err.kind is kind and err.host == "h:22" and str(err) == "message"


def test_writing_to_a_process_that_has_ended_is_remote(case):
    async def body(shell: Shell) -> None:
        proc = await shell.start(["true"])
        assert await proc.wait() == 0
        with pytest.raises(ShellError) as err:
            for _ in range(50):  # a pipe may take some bytes before it says it is closed
                await proc.write(b"x" * 65536)
        assert err.value.kind is ShellFailure.REMOTE
    on(case, body)
