"""Benchmark harness for fissure: corpora, peers, measurements and committed results."""
