"""Where the service listens and what its workers are told: ``internalHostName`` (site),
``hostName`` and ``TCPPortRange`` (global), ``servicePort``; and the worker logging keys
reaching the workers of local blocks.  Real services, real workers, real tasks; only
loopback addresses (127.0.0.0/8 is all this machine's)."""

from __future__ import annotations

import asyncio
import errno
import socket
from pathlib import Path

import pytest

from swiftnb.coasters import make_provider
from swiftnb.coasters.provider import CoasterProvider
from swiftnb.config import load_config_text
from swiftnb.scheduling.build import BuildContext
from swiftnb.scheduling.clock import RealClock
from swiftnb.scheduling.provider import ProviderError

pytestmark = pytest.mark.timeout(120)


def _provider(site, tmp_path: Path, options: str = "", top: str = "") -> CoasterProvider:
    """The provider a run builds for a local coaster site with these options, its events
    going to the test's Site helper (``site`` from the make_site fixture)."""
    config = load_config_text(
        f"{top}\nsites: [c]\n"
        'site.c { execution { type: "coaster", jobManager: "local:local", '
        f'options {{ maxJobs: 1, maxNodesPerJob: 1, planInterval: 0.1 {options} }} }}\n'
        f' workDirectory: "{tmp_path / "work"}" }}\n')
    provider = make_provider(config.sites["c"], BuildContext(config, site.bus, RealClock(),
                                                             site_run="run-1"))
    site.provider = provider
    return provider


def _worker_hosts(provider: CoasterProvider) -> set[str]:
    """The --host of every worker process of the provider's blocks (their command lines)."""
    hosts = set()
    for block in provider.service.state()["blocks"]:
        for pid in block["pids"]:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            hosts.add(argv[argv.index(b"--host") + 1].decode())
    return hosts


def _run_one(site, provider: CoasterProvider):
    async def main():
        result = await asyncio.wait_for(site.run(site.task(1)), 60)
        hosts = _worker_hosts(provider)
        service = provider.service
        where = (service.host, service.port,
                 service._listeners[0]._sock.getsockname()[0])
        await provider.shutdown()
        return result, hosts, where

    return asyncio.run(main())


@pytest.mark.parametrize(("options", "top", "told", "bound"), [
    # internalHostName: where the service listens and what workers are told
    (', internalHostName: "127.0.0.2"', "", "127.0.0.2", "127.0.0.2"),
    # the global hostName when the site has no internalHostName
    ("", 'hostName: "localhost"', "localhost", "127.0.0.1"),
    # the site's internalHostName over the global hostName
    (', internalHostName: "127.0.0.2"', 'hostName: "localhost"', "127.0.0.2", "127.0.0.2"),
    # listening everywhere, workers told hostName
    (', listenAddress: "0.0.0.0"', 'hostName: "127.0.0.3"', "127.0.0.3", "0.0.0.0"),
    # nothing said: loopback
    ("", "", "127.0.0.1", "127.0.0.1"),
])
def test_workers_are_told_internal_host_name_else_host_name(make_site, tmp_path, options, top,
                                                            told, bound):
    site = make_site({})
    provider = _provider(site, tmp_path, options, top)
    result, hosts, (host, _, address) = _run_one(site, provider)
    assert result.ok, result.message
    assert host == told and hosts == {told}
    assert address == bound
    assert [s for s, _ in site.statuses["echo-00001"]] == [8, 1, 16, 2, 17, 7]


def _free_pair() -> int:
    """A port p with p and p + 1 free just now."""
    for p in range(41000, 49000, 7):
        socks = []
        try:
            for port in (p, p + 1):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return p
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no two free ports in a row")


def test_the_service_listens_inside_tcp_port_range(make_site, tmp_path):
    low = _free_pair()
    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    held.bind(("127.0.0.1", low))
    held.listen()
    site = make_site({})
    provider = _provider(site, tmp_path, top=f'TCPPortRange: "{low}, {low + 1}"')
    try:
        result, _, (_, port, _) = _run_one(site, provider)
    finally:
        held.close()
    assert result.ok, result.message
    assert port == low + 1  # the first free one of the range


def test_a_full_tcp_port_range_is_a_clear_error(make_site, tmp_path):
    low = _free_pair()
    held = []
    for port in (low, low + 1):
        s = socket.socket()
        s.bind(("127.0.0.1", port))
        s.listen()
        held.append(s)
    site = make_site({})
    _provider(site, tmp_path, top=f'TCPPortRange: "{low},{low + 1}"')  # site.provider
    try:
        with pytest.raises(ProviderError) as caught:
            asyncio.run(site.run(site.task(1)))
    finally:
        for s in held:
            s.close()
    assert str(caught.value) == (
        f"coaster site c: cannot listen on 127.0.0.1: every port of TCPPortRange {low}-{low + 1} "
        "is in use; check execution.options listenAddress / internalHostName / servicePort and "
        "swift.conf's hostName / TCPPortRange")


def test_service_port_wins_over_the_range(make_site, tmp_path):
    low = _free_pair()
    site = make_site({})
    provider = _provider(site, tmp_path, f", servicePort: {low + 1}",
                         top=f'TCPPortRange: "{low},{low}"')
    result, _, (_, port, _) = _run_one(site, provider)
    assert result.ok and port == low + 1


def test_a_taken_service_port_names_it(make_site, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        site = make_site({})
        provider = _provider(site, tmp_path, f", servicePort: {port}")

        async def start():
            with pytest.raises(ProviderError) as caught:
                await provider.start()
            return caught.value

        exc = asyncio.run(start())
    assert f"cannot listen on 127.0.0.1:{port} ({__import__('os').strerror(errno.EADDRINUSE)})" \
        in str(exc)


def test_worker_logging_keys_reach_local_workers(make_site, tmp_path):
    logs = tmp_path / "wlogs"
    site = make_site({})
    provider = _provider(site, tmp_path, f', workerLoggingLevel: "DEBUG", '
                                         f'workerLoggingDirectory: "{logs}"')
    result, _, _ = _run_one(site, provider)
    assert result.ok, result.message
    block = site.kinds("BLOCK_REQUESTED")[0]["id"]
    text = (logs / f"worker-{block}-000000.log").read_text()
    assert "INFO worker " in text and "DEBUG task " in text and " begins" in text
    assert "TRACE" not in text


def test_worker_logging_none_writes_nothing(make_site, tmp_path):
    logs = tmp_path / "wlogs"
    site = make_site({})
    provider = _provider(site, tmp_path, f', workerLoggingLevel: "NONE", '
                                         f'workerLoggingDirectory: "{logs}"')
    result, _, _ = _run_one(site, provider)
    assert result.ok and not logs.exists()
