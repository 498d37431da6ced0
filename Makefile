# `make demo` and `make test` do all set-up on a fresh machine (scripts/setup.sh), then their job.
# Every run imports kompute_ml as installed from its wheel: PYTHONSAFEPATH keeps the source tree
# (the working directory, whose kompute_ml/ has no built modules) off sys.path.
PY := PYTHONSAFEPATH=1 .venv/bin/python
PYTEST_ARGS ?=
# the interpreters `make wheel` builds for (one wheel each): pyenv's 3.11, 3.12 and 3.13 where
# pyenv has them, else python3.X on PATH
PYTHONS ?= $(shell for v in 3.11 3.12 3.13; do \
    p="$$(ls -d "$$(pyenv root 2>/dev/null)"/versions/$$v.*/bin/python$$v 2>/dev/null | tail -n1)"; \
    [ -x "$$p" ] || p="$$(command -v python$$v)"; echo "$$p"; done)
# the wheel scripts/setup.sh built for .venv's Python (built and auditwheel-repaired as `make
# wheel` builds dist/, manylinux_2_28; looked up when a recipe runs, after setup made it)
DEV_WHEEL = $$(ls build/dev-wheel/kompute_ml-*.whl | tail -n1)

# the estimator and array tests, run again at the oldest numpy/scipy/scikit-learn pyproject declares
MIN_TESTS := tests/test_logistic.py tests/test_logistic_sklearn_checks.py tests/test_array.py \
             tests/test_fusion.py tests/test_reduction.py tests/test_linalg.py
# the tests that reach kompute_ml._native (and kp's module), run under ASan + UBSan
SANITIZE_TESTS := tests/test_native.py tests/test_parallel_copy.py tests/test_direct_reads.py \
                  tests/test_direct_writes.py tests/test_interrupt_cpus.py tests/test_staging.py

.PHONY: setup demo wheel test test-wheel test-min test-install test-sanitize test-validation fuzz bench docs clean

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m kompute_ml info
	$(PY) examples/demo.py

# manylinux_2_28_x86_64 wheels for each of $(PYTHONS) in dist/: built with zig for glibc 2.28,
# the Vulkan loader built from source with it and bundled, auditwheel-repaired to that policy
# (scripts/manylinux_toolchain.sh, docs/decisions/0009-manylinux-policy.md)
wheel:
	@bash scripts/setup.sh --packages
	@for p in $(PYTHONS); do KM_TOOLCHAIN=zig bash scripts/build_wheel.sh $$p dist || exit 1; done
	@ls -l dist/*.whl

test: setup
	@$(MAKE) --no-print-directory test-wheel
	@$(MAKE) --no-print-directory test-min
	@$(MAKE) --no-print-directory test-install
	@$(MAKE) --no-print-directory test-sanitize

# the suite against the wheel installed in a clean venv (.venv-wheel: only what the wheel pulls)
test-wheel: setup
	@bash scripts/setup_wheel_venv.sh $(DEV_WHEEL) .venv-wheel
	PYTHONSAFEPATH=1 .venv-wheel/bin/python -m pytest -q $(PYTEST_ARGS)

# .venv-min holds the same wheel at the oldest dependency versions pyproject.toml declares
test-min: setup
	@bash scripts/setup_min.sh $(DEV_WHEEL)
	PYTHONSAFEPATH=1 .venv-min/bin/python -m pytest -q $(PYTEST_ARGS) $(MIN_TESTS)

# a fresh venv of an unprivileged user installs the wheel from outside the source tree
test-install: setup
	@bash scripts/check_install.sh $(DEV_WHEEL)

# kompute_ml._native built with AddressSanitizer + UndefinedBehaviorSanitizer, the tests that
# reach native code run against it
test-sanitize: setup
	@bash scripts/test_sanitize.sh $(SANITIZE_TESTS)

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
.PHONY: setup demo wheel test test-wheel test-min test-install test-sanitize test-validation fuzz bench docs clean
