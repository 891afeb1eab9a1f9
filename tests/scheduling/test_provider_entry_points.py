"""swiftnb's own providers are the entry points docs/sites.md says they are, loaded by
the path a package's are; and a provider's bug is not reported as the user's mistake
(issue 27)."""

from __future__ import annotations

from importlib import metadata

import pytest

from swiftnb.config import load_config_text
from swiftnb.config.model import SiteConfig
from swiftnb.scheduling import build
from swiftnb.scheduling.build import BuildContext, check_sites, provider_factory
from swiftnb.scheduling.provider import Provider

CONFIG = 'site.mysite {\n  execution { type: "local" }\n  workDirectory: "/tmp/w"\n}\nsites: [mysite]\n'


def test_the_built_in_providers_are_installed_entry_points() -> None:
    points = {ep.name: ep.value for ep in metadata.entry_points(group=build.ENTRY_POINT_GROUP)}
    assert {name: points.get(name) for name in build.BUILT_IN} == build.BUILT_IN


def test_an_entry_point_loads_by_the_built_ins_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A package's entry point (here: the slurm factory under a new name) is imported the
    way a built-in one is."""
    point = metadata.EntryPoint("mine", build.BUILT_IN["slurm"], build.ENTRY_POINT_GROUP)
    monkeypatch.setattr(metadata, "entry_points", lambda group: [point] if group == point.group else [])
    monkeypatch.delitem(build._REGISTERED, "mine", raising=False)
    try:
        assert provider_factory("mine") is provider_factory("slurm")
    finally:
        build._REGISTERED.pop("mine", None)


def _factory_raising(error: Exception):  # -> ProviderFactory
    def make(site: SiteConfig, ctx: BuildContext) -> Provider:
        raise error
    return make


def test_a_provider_refusing_its_options_is_a_configuration_problem(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(build._REGISTERED, "local", _factory_raising(ValueError("no such queue")))
    assert "site mysite: no such queue" in check_sites(load_config_text(CONFIG))


def test_a_provider_bug_is_reported_as_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    bug = TypeError("make() takes 1 positional argument but 2 were given")
    monkeypatch.setitem(build._REGISTERED, "local", _factory_raising(bug))
    with pytest.raises(TypeError) as raised:
        check_sites(load_config_text(CONFIG))
    assert raised.value is bug
