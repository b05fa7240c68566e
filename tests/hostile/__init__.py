"""Hostile inputs built at test time: folder entries (``walk_cases``) for the walk, run
through ``fissure chunk`` and ``fissure ingest`` by ``test_walk`` and ``bench/hostile.py``."""
