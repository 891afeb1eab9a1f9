"""swift.conf and the legacy sites.xml / tc.data / swift.properties -> one typed Config.

Public API (stable; others code against it):

    load_config(path=None, *, properties=None, sites_file=None, tc_file=None,
                properties_file=None, env=os.environ, cwd=".") -> Config
    load_config_text(text, *, properties=None, env=None) -> Config   (no user files)
    Config.sites / .selected_sites / .app_for(site, tr) / .origin(key) / .dump() / .get(path)
    SiteConfig, AppConfig, ExecutionConfig, ConfigError

See docs/configuration.md for every key and its default.
"""

from swiftnb.config.loader import DEFAULTS_FILE, load_config, load_config_text
from swiftnb.config.model import (
    AppConfig, Config, ConfigError, ExecutionConfig, FilesystemConfig, SiteConfig,
)
from swiftnb.config.types import THROTTLE_OFF, Distribution, parse_distribution

__all__ = [
    "load_config", "load_config_text", "Config", "SiteConfig", "AppConfig", "ExecutionConfig",
    "FilesystemConfig", "ConfigError", "DEFAULTS_FILE",
    "THROTTLE_OFF", "Distribution", "parse_distribution",
]
