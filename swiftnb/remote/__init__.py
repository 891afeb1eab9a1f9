"""What runs on the far side: the job wrapper (``wrapper.py``) and the coaster worker
(``worker.py``), on SSH hosts, batch nodes and coaster blocks, with whatever Python is
there.  Standard library only, and nothing of swiftnb outside this package
(tests/test_remote_stdlib.py); each module is shipped as a file of its own
(``shared/_swiftwrap.py``, ``shared/_swiftworker.py``) and runs as a script there."""
