"""Statistics: pure functions over samples (shifts with intervals, rank tests, power, stopping rules,
change points, attribution, tails)."""
