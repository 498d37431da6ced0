# `make demo` and `make test` do all set-up on a fresh machine (scripts/setup.sh), then their job.
PY := .venv/bin/python
PYTEST_ARGS ?=

.PHONY: setup demo test test-validation bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m kompute_ml info
	$(PY) examples/demo.py

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

test-validation: setup
	KOMPUTE_ML_VALIDATION=1 $(PY) -m pytest -q $(PYTEST_ARGS)

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf build dist .pytest_cache
