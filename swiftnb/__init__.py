"""swiftnb: Swift parallel scripting (Swift/K 0.9x) in Python and Jupyter."""

__version__ = "0.1.0"

#: The Swift/K release whose language, options, messages and logs swiftnb follows.
SWIFT_VERSION = "0.96.2"


def load_ipython_extension(ipython):  # noqa: ANN001  (IPython's hook)
    """``%load_ext swiftnb``: the ``%%swift`` and ``%swift_config`` magics."""
    from swiftnb.kernel.magic import load_ipython_extension as load

    load(ipython)
