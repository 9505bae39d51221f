"""Benchmarks: `make bench` runs them all and records their numbers in bench/RESULTS.md."""
