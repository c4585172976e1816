"""Test support shared by the test suite and ``bench/``: the real Redis-protocol server."""
