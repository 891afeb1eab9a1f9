"""The memoize keys: on the command line as other global keys, in swift.conf, and the
notebook default that a configuration overrides."""

from __future__ import annotations

import pytest

from swiftnb.runmemo import memoize_wanted
from swiftnb.runner import RunSetupError, load_run_config

pytestmark = pytest.mark.timeout(60)


def test_defaults_are_off_dot_swiftnb_and_one_gigabyte(tmp_path):
    config = load_run_config(base_dir=str(tmp_path))
    assert (config.memoize, config.memoize_store, config.memoize_cache_size) == (
        False, ".swiftnb", 1 << 30)
    assert memoize_wanted(config, None) is False
    assert memoize_wanted(config, True) is True  # the kernel's default where nothing says


def test_command_line_properties_set_them(tmp_path):
    config = load_run_config(properties={"memoize": "true", "memoizeStore": "/x/store",
                                         "memoizeCacheSize": "512 MB"}, base_dir=str(tmp_path))
    assert (config.memoize, config.memoize_store, config.memoize_cache_size) == (
        True, "/x/store", 512 << 20)


def test_a_configuration_that_says_false_wins_over_the_notebook_default(tmp_path):
    (tmp_path / "swift.conf").write_text("memoize: false\nmemoizeCacheSize: 0\n")
    config = load_run_config("swift.conf", base_dir=str(tmp_path))
    assert memoize_wanted(config, True) is False
    assert config.memoize_cache_size == 0


@pytest.mark.parametrize("bad", ["lots", "-1 GB", "1 parsec"])
def test_a_bad_size_names_the_key(tmp_path, bad):
    with pytest.raises(RunSetupError) as caught:
        load_run_config(properties={"memoizeCacheSize": bad}, base_dir=str(tmp_path))
    assert "memoizeCacheSize" in str(caught.value) and "a size in bytes" in str(caught.value)


def test_caching_algorithm_lru_stays_accepted(tmp_path):
    config = load_run_config(properties={"cachingAlgorithm": "LRU", "memoize": "true"},
                             base_dir=str(tmp_path))
    assert config.caching_algorithm == "LRU" and config.memoize
