"""docs/builtins.md and docs/mappers.md list every builtin and mapper there is."""

from pathlib import Path

from swiftnb.engine.builtins import REGISTRY
from swiftnb.engine.mappers import MAPPERS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_builtin_is_documented():
    text = (DOCS / "builtins.md").read_text()
    missing = [n for n, b in REGISTRY.items() if b.alias_of is None and f"**`{n}`**" not in text]
    assert missing == []
    aliases = [n for n, b in REGISTRY.items() if b.alias_of is not None and f"`{n}`" not in text]
    assert aliases == []


def test_every_mapper_is_documented():
    text = (DOCS / "mappers.md").read_text()
    assert [n for n in MAPPERS if f"`{n}`" not in text] == []
