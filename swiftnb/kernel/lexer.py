"""A pygments lexer for Swift script (the Swift/K 0.9x parallel scripting language), so
notebooks, nbconvert and Sphinx highlight cells.  Registered as the pygments entry point
``swift-script`` (pyproject.toml); the kernel's ``language_info`` names it."""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import (Comment, Keyword, Name, Number, Operator, Punctuation, String,
                            Text, Whitespace)

from swiftnb.lang.builtins import BUILTINS
from swiftnb.lang.mappers import NAMES as MAPPER_NAMES

__all__ = ["SwiftScriptLexer"]


class SwiftScriptLexer(RegexLexer):
    """Swift script: ``app`` procedures, mappers ``<...>``, ``foreach``, ``@filename``."""

    name = "Swift script"
    aliases = ["swift-script", "swiftscript", "swiftk"]
    filenames: list[str] = []  # *.swift is Apple's Swift for pygments; ask by alias
    mimetypes = ["text/x-swift-script"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"#.*?$", Comment.Single),
            (r"/\*", Comment.Multiline, "comment"),
            (r'"', String.Double, "string"),
            (words(("app", "foreach", "in", "iterate", "until", "if", "else", "switch",
                    "case", "default", "import", "global", "namespace", "profile"),
                   suffix=r"\b"), Keyword),
            (words(("stdin", "stdout", "stderr"), suffix=r"\b"), Keyword.Pseudo),
            (words(("true", "false"), suffix=r"\b"), Keyword.Constant),
            (r"(type)(\s+)([A-Za-z_]\w*)", bygroups(Keyword.Declaration, Whitespace,
                                                    Name.Class)),
            (words(("int", "float", "string", "boolean", "file", "external", "auto",
                    "void"), suffix=r"\b"), Keyword.Type),
            (r"@[A-Za-z_]\w*", Name.Builtin),
            (words(tuple(sorted(MAPPER_NAMES, key=len, reverse=True)), suffix=r"\b"),
             Name.Builtin.Pseudo),
            (words(tuple(sorted(BUILTINS, key=len, reverse=True)), suffix=r"\b(?=\s*\()"),
             Name.Builtin),
            (r"[A-Za-z_]\w*(?=\s*\()", Name.Function),
            (r"[A-Za-z_]\w*", Name),
            (r"\d+\.\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+", Number.Float),
            (r"\d+", Number.Integer),
            (r"%%|==|!=|<=|>=|&&|\|\||<<|[-+*/%<>=!&|]", Operator),
            (r"[{}()\[\];,.:@]", Punctuation),
            (r".", Text),
        ],
        "comment": [
            (r"[^*/]+", Comment.Multiline),
            (r"\*/", Comment.Multiline, "#pop"),
            (r"[*/]", Comment.Multiline),
        ],
        "string": [
            (r'\\.', String.Escape),
            (r'[^"\\\n]+', String.Double),
            (r'"', String.Double, "#pop"),
            (r"\n", String.Double, "#pop"),
        ],
    }
