"""swiftnb: Swift parallel scripting (Swift/K 0.9x) in Python and Jupyter."""

__version__ = "0.1.0"
