"""Targets: where a workload runs, by capability (boots guests, runs commands, reboots)."""
