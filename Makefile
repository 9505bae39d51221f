# Every target installs what it needs first (scripts/setup.sh is idempotent).
VENV := .venv/bin
OUT := out

.PHONY: setup demo test lint bench clean

setup:
	./scripts/setup.sh

demo: setup
	./scripts/demo.sh $(OUT)

lint: setup
	$(VENV)/ruff check bootscope tests bench
	$(VENV)/ruff format --check bootscope
	$(VENV)/mypy bootscope

test: lint
	$(VENV)/pytest -q -ra

bench: setup
	$(VENV)/python -m bench.run

clean:
	rm -rf $(OUT) .venv .mypy_cache .ruff_cache .pytest_cache
