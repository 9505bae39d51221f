# Every target installs what it needs first (scripts/setup.sh is idempotent).
VENV := .venv/bin
OUT := out

.PHONY: setup demo test test-floors lint bench mutation clean

setup:
	./scripts/setup.sh

demo: setup
	./scripts/demo.sh $(OUT)

lint: setup
	$(VENV)/ruff check bootscope tests bench scripts
	$(VENV)/ruff format --check bootscope scripts
	$(VENV)/mypy bootscope scripts
	$(VENV)/lint-imports

# The suite in two lanes at once (the built image's tests beside the rest), then the tests that need
# the host alone: scripts/lanes.py. `.venv/bin/pytest` alone runs the same tests in one process.
test: lint
	$(VENV)/python scripts/lanes.py

# The fast tests in a fresh virtualenv with every dependency at its pyproject.toml floor (downloads
# from PyPI): the floors are versions the code was run with. Only the test tools of the dev extra: the
# linters and scipy-stubs follow the newest scipy and are not what a user installs.
FLOORS := .venv-floors
test-floors:
	rm -rf $(FLOORS) && python3 -m venv $(FLOORS)
	python3 scripts/floors.py > $(FLOORS)/constraints.txt
	$(FLOORS)/bin/pip install -q --upgrade pip
	$(FLOORS)/bin/pip install -q -c $(FLOORS)/constraints.txt -e . pytest pytest-timeout hypothesis
	$(FLOORS)/bin/pytest -q -ra -m "not boot and not browser and not postgres" -p no:cacheprovider

bench: setup
	$(VENV)/python -m bench.run

# Mutation testing of the statistics and the metric registry ([tool.mutmut] in pyproject.toml): about
# 4600 mutants, several hours on 2 cores (batch.py's run the power simulations: about 3 a minute); one
# module: `.venv/bin/mutmut run --max-children 2 "bootscope.stats.MODULE*"`. The survivors and why each
# is equivalent are in bench/RESULTS.md (mutation).
mutation: setup
	$(VENV)/pip install -q 'mutmut>=3.8,<4'
	$(VENV)/mutmut run --max-children 2
	$(VENV)/mutmut results

clean:
	rm -rf $(OUT) .venv .venv-floors .mypy_cache .ruff_cache .pytest_cache mutants
