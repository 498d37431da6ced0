#!/usr/bin/env bash
# before_after.sh BEFORE_TGZ ROUNDS -- CMD... — on the lent GPU machine, after gpu_setup.sh has
# installed this tree's wheel: unpacks BEFORE_TGZ (a `git archive` of an earlier commit) into
# /tmp/before, installs that tree with its own benchmarks/gpu_setup.sh into /tmp/before-site
# (PYTHONPATH puts it ahead of the installed wheel; a kp it builds is its own), then runs CMD
# ROUNDS times in each tree, alternating (before, after, before, ...) so drift hits both alike.
# CMD runs from each tree's root (its own benchmark scripts); output lines are prefixed.
set -u
tgz="$1" rounds="$2"; shift 3
here="$PWD" site=/tmp/before-site
if [ ! -d "$site/kompute_ml" ]; then
    rm -rf /tmp/before && mkdir -p /tmp/before && tar -xzf "$tgz" -C /tmp/before || exit 1
    cp -r .gpu /tmp/before/ 2>/dev/null
    mkdir -p /tmp/before/tools/perf && cp -n tools/perf/ab_fit.py tools/perf/ab_runtime.sh /tmp/before/tools/perf/
    (   cd /tmp/before || exit 1
        # its gpu_setup builds its wheel into its dist/ and installs it into python3; that
        # wheel goes aside into $site (a tree from before the wheel, with no dist/ wheel, is
        # installed from its source there instead)
        source benchmarks/gpu_setup.sh > /tmp/before-setup.log 2>&1 || { tail -20 /tmp/before-setup.log; exit 1; }
        w="$(ls dist/kompute_ml-*.whl 2>/dev/null | tail -n1)"
        if [ -n "$w" ]; then
            python3 -m pip install -q --no-index --no-deps --target "$site" "$w" || exit 1
        else
            python3 -m pip install -q --no-index --no-deps --no-build-isolation --target "$site" . || exit 1
        fi
    ) || exit 1
    python3 -m pip install -q --no-index --no-deps --force-reinstall "$(ls "$here"/dist/kompute_ml-*.whl | tail -n1)" || exit 1
fi
for r in $(seq 1 "$rounds"); do
    (cd /tmp/before && PYTHONPATH="$site" "$@" 2>&1 | sed "s/^/before[$r] /")
    (cd "$here" && "$@" 2>&1 | sed "s/^/after[$r]  /")
done
