"""The key locator agrees with pyhocon: every value pyhocon reads has a file line."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyhocon import ConfigFactory

from swiftnb.config.locate import Origins, Scanner, tokenize

KEYS = st.sampled_from(["site", "local", "app", "ALL", "maxJobs", "x", "y1", "work_dir",
                        "execution", "options", "env", "PATH", "a-b"])
SCALARS = st.one_of(st.integers(-5, 5000), st.booleans(),
                    st.text("abc xyz/:._-", min_size=0, max_size=8),
                    st.lists(st.sampled_from(["a", "b", "c"]), max_size=3))
TREES = st.recursive(SCALARS, lambda inner: st.dictionaries(KEYS, inner, min_size=1,
                                                             max_size=4), max_leaves=12)


def scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return json.dumps(value)


def render(tree: dict, styles, prefix: str = "", depth: int = 0) -> list[str]:
    lines: list[str] = []
    pad = "    " * depth
    for key, value in tree.items():
        sep = styles.draw(st.sampled_from([": ", " = ", ":"]))
        if isinstance(value, dict):
            if styles.draw(st.booleans()):
                lines += render(value, styles, prefix + key + ".", depth)
            else:
                lines.append(f"{pad}{prefix}{key} {{")
                if styles.draw(st.booleans()):
                    lines.append(f"{pad}    # a comment")
                lines += render(value, styles, "", depth + 1)
                lines.append(f"{pad}}}")
        else:
            end = styles.draw(st.sampled_from(["", ",", "  // note", "  # note"]))
            lines.append(f"{pad}{prefix}{key}{sep}{scalar(value)}{end}")
    return lines


def leaves(tree, path=()):
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from leaves(value, path + (key,))
    else:
        yield path


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=st.dictionaries(KEYS, TREES, min_size=1, max_size=4), styles=st.data())
def test_every_parsed_leaf_has_its_line(tree, styles):
    text = "\n".join(render(tree, styles)) + "\n"
    parsed = ConfigFactory.parse_string(text).as_plain_ordered_dict()
    origins = Origins()
    Scanner(origins, "[R]", lambda s: s).scan_file("t.conf", text)
    lines = text.splitlines()
    for path in leaves(parsed):
        origin = origins.leaves.get(path)
        assert origin is not None, (path, text)
        assert path[-1] in lines[origin.line - 1], (path, origin, text)


def test_tokenizer_keeps_line_numbers_across_multiline_strings():
    toks = tokenize('a: """one\ntwo"""\nb: "x\\"y" // c\n  c += 3\n')
    by_text = {t.text: t.line for t in toks if t.kind in ("UNQ", "STR")}
    assert by_text["b"] == 3 and by_text['x"y'] == 3 and by_text["c"] == 4


def test_null_and_override_rules():
    origins = Origins()
    Scanner(origins, "[R]", lambda s: s).scan_file("t.conf", (
        "a { b: 1, c: 2 }\n"
        "a.b: null\n"
        "d: {x: 1}\n"
        "d: 5\n"
        "e: [1,\n 2]\n"
        "f { g: 1 }\n"
        "f { h: 2 }\n"))
    assert ("a", "b") not in origins.leaves and origins.leaves[("a", "c")].line == 1
    assert origins.leaves[("d",)].line == 4 and ("d", "x") not in origins.leaves
    assert origins.leaves[("e",)].line == 5
    assert origins.leaves[("f", "g")].line == 7 and origins.leaves[("f", "h")].line == 8


JSON_SCALARS = st.one_of(
    st.integers(-10**9, 10**9), st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False, width=64).filter(lambda f: abs(f) < 1e300),
    # (pyhocon itself reads [""] as [] and does not decode \\u escapes: avoid those)
    st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\\"),
            min_size=1, max_size=10))
JSON_TREES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text("abcXYZ_-.: 1", min_size=1, max_size=6), inner, min_size=1,
                        max_size=3)),
    max_leaves=6)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=st.dictionaries(st.text("abcdef", min_size=1, max_size=5), JSON_TREES,
                               min_size=1, max_size=4))
def test_dump_parses_back_to_the_same_tree(options):
    """Any free-form value survives the dump: it is HOCON for exactly the merged tree."""
    from swiftnb.config import load_config_text
    from swiftnb.config.hocon import _plain

    config = load_config_text("siteSelectionOptions: " + json.dumps(options, ensure_ascii=False))
    assert config.site_selection_options == options
    text = config.dump()
    body = text[text.index("\n{") + 1:]
    assert _plain(ConfigFactory.parse_string(body)) == config.raw
