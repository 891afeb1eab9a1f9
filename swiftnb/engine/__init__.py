"""Runs a checked Swift program on asyncio: dataflow values, statements, procedures, built-ins, mappers."""
