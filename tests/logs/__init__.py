"""The log tests, a package so that their helpers are imported by package-relative path
(``from ._helpers import ...``): a top-level ``conftest`` or ``synthetic`` module would be
whichever test directory's came first on the pytest command line."""
