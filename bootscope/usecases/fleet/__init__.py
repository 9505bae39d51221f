"""Fleet use cases: import many boot logs, query and compare them."""
