# `make demo` and `make test` do all set-up on a fresh machine (scripts/setup.sh), then their job.
PY := .venv/bin/python
PYTEST_ARGS ?=

# the estimator and array tests, run again at the oldest numpy/scipy/scikit-learn pyproject declares
MIN_TESTS := tests/test_logistic.py tests/test_logistic_sklearn_checks.py tests/test_array.py \
             tests/test_fusion.py tests/test_reduction.py tests/test_linalg.py

.PHONY: setup demo test test-min test-validation fuzz bench docs clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m kompute_ml info
	$(PY) examples/demo.py

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)
	@$(MAKE) --no-print-directory test-min

# .venv-min holds kompute_ml as an installed wheel; PYTHONSAFEPATH keeps the source tree (the
# working directory) off sys.path, so that the wheel is what the tests import
test-min: setup
	@bash scripts/setup_min.sh
	PYTHONSAFEPATH=1 .venv-min/bin/python -m pytest -q $(PYTEST_ARGS) $(MIN_TESTS)

test-validation: setup
	KOMPUTE_ML_VALIDATION=1 KOMPUTE_ML_DEBUG_LOCKS=1 $(PY) -m pytest -q $(PYTEST_ARGS)

# the coverage-guided SPIR-V fuzzer (tests/fuzz_spirv.py, atheris) for FUZZ_SECONDS, seeded with
# every built-in shader and tests/fuzz_corpus/spirv/; an input that breaks its property (an
# exception other than KomputeMLError/TypeError/ValueError, a crash, over 2 s or 512 MB) stops it
# and is left in build/fuzz/found/: fixed, it joins tests/fuzz_corpus/spirv/
FUZZ_SECONDS ?= 120
fuzz: setup
	@rm -rf build/fuzz && mkdir -p build/fuzz/corpus build/fuzz/seeds build/fuzz/found
	$(PY) tests/fuzz_spirv.py --write-seeds build/fuzz/seeds
	$(PY) tests/fuzz_spirv.py -max_total_time=$(FUZZ_SECONDS) -timeout=2 -rss_limit_mb=512 \
	    -print_final_stats=1 -artifact_prefix=build/fuzz/found/ \
	    build/fuzz/corpus build/fuzz/seeds tests/fuzz_corpus/spirv 2>build/fuzz/log.txt \
	    || { tail -40 build/fuzz/log.txt; echo "fuzz: an input broke the property:" \
	         build/fuzz/found/*; exit 1; }
	@grep -E "^(Done|stat::number_of_executed_units)" build/fuzz/log.txt
	@echo "fuzz: $$(ls build/fuzz/corpus | wc -l) new inputs kept; seeds: $$(ls build/fuzz/seeds | wc -l)" \
	    "shaders and $$(ls tests/fuzz_corpus/spirv | wc -l) regression inputs"

bench: setup
	$(PY) benchmarks/run_all.py

# the documentation site, warnings as errors (-W), into docs/_build/html
docs: setup
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

clean:
	rm -rf build dist .pytest_cache .venv-min docs/_build docs/_generated
