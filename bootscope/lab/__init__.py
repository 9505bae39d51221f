"""The lab: measure. Plans (plans/) run by the one runner (runner.py, slots.py) on an executor
(executors/), each slot a workload (workloads/) on a target (targets/); qemu/ holds what a guest needs.
Every finished measurement is stored at once."""
