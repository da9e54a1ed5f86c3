"""asv benchmark suites for nbtok (see docs/benchmarks.md).

Shared helpers (corpus paths, peers, MB/s) live in ``_common.py``.
"""
