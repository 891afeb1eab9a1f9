"""Providers that run a Task somewhere (local, ssh, batch, sim) and the job wrapper.

``wrapper`` is stdlib-only and importable on its own (coaster workers ship it); ``local``
runs jobs on this machine through it under asyncio.
"""
