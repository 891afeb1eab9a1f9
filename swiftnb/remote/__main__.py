"""``python3 -I _swiftremote.pyz wrap|worker ...`` (the shipped zipapp, see payload.py), or
``python -m swiftnb.remote wrap|worker ...`` in an installation: one entry for what runs on
the far side."""

from __future__ import annotations

import sys

USAGE = "usage: _swiftremote.pyz wrap < spec.json | worker [worker options]"


def main(argv: list[str] | None = None) -> int:
    """Run the wrapper (a spec on stdin, its result on stdout) or the coaster worker."""
    args = sys.argv[1:] if argv is None else argv
    command, rest = (args[0], args[1:]) if args else ("", [])
    if command == "wrap" and not rest:
        from swiftnb.remote.wrap.main import main as wrap_main

        return wrap_main()
    if command == "worker":
        from swiftnb.remote.worker import main as worker_main

        return worker_main(rest)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
