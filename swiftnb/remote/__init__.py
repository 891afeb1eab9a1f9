"""What runs on the far side: the job wrapper (``wrapper.py``, the package ``wrap/``) and
the coaster worker (``worker.py``), on SSH hosts, batch nodes and coaster blocks, with
whatever Python is there.  Standard library only, and nothing of swiftnb outside this
package (tests/test_remote_stdlib.py); shipped as one zipapp, ``shared/_swiftremote.pyz``
(payload.py), run there as ``python3 -I _swiftremote.pyz wrap|worker``."""
