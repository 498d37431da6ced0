#!/usr/bin/env bash
# manylinux_toolchain.sh PYTHON — what scripts/build_wheel.sh needs for a manylinux_2_28_x86_64
# wheel (docs/decisions/0009-manylinux-policy.md), made once into build/manylinux/ and found there
# by a second run (each step leaves a stamp); prints the CMake arguments for the build on stdout.
#   bin/cc, bin/c++: zig (PyPI's ziglang, pinned) compiling for x86_64-linux-gnu with glibc 2.28's
#       symbol versions, C++ against its own libc++, linked statically into each module;
#   sysroot/lib/libvulkan.so.1: the Vulkan loader, built with that compiler from Debian's source
#       package (the one Debian release whose source the package index serves), compute only: no
#       X11/Wayland WSI; it finds drivers where the distribution's loader does (/etc, /usr/share,
#       VK_DRIVER_FILES);
#   sysroot/include: copies of the system's Vulkan headers (libvulkan-dev, the ones the system
#       build uses) and fmt's (libfmt-dev, used header-only) — -I/usr/include would put glibc
#       2.36's own headers before zig's 2.28 ones.
# Needs Debian's apt (the source package; root or not), cmake, ninja, python3.
set -euo pipefail
py="${1:?usage: manylinux_toolchain.sh PYTHON}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
d="$here/build/manylinux"
ZIGLANG=0.17.1          # ziglang's version (its clang, libc++ and glibc stubs)
TARGET=x86_64-linux-gnu.2.28
LOADER_SUITE=trixie     # Debian release whose vulkan-loader source package is built
mkdir -p "$d"
log="$d/toolchain.log"
say() { echo "manylinux_toolchain: $*" >&2; }
fail() { say "FAILED: $*; last lines of $log:"; tail -n 30 "$log" >&2; exit 1; }

# 1. zig, and compiler wrappers CMake can name (one executable each, the target built in)
if [ "$(cat "$d/zig/.version" 2>/dev/null)" != "$ZIGLANG" ]; then
    say "installing ziglang $ZIGLANG into build/manylinux/zig"
    rm -rf "$d/zig"
    "$py" -m pip install -q --target "$d/zig" "ziglang==$ZIGLANG" >>"$log" 2>&1 || fail "pip install ziglang"
    echo "$ZIGLANG" >"$d/zig/.version"
fi
zig="$d/zig/ziglang/zig"
mkdir -p "$d/bin" "$d/zig-cache"
for t in cc c++; do
    # zig's cache (its libc++ built once per target and mode) stays under build/
    printf '#!/bin/sh\nZIG_GLOBAL_CACHE_DIR="%s" exec "%s" %s -target %s "$@"\n' \
        "$d/zig-cache" "$zig" "$t" "$TARGET" >"$d/bin/$t"
done
for t in ar ranlib; do printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$zig" "$t" >"$d/bin/$t"; done
chmod +x "$d"/bin/*
cc_args=(-DCMAKE_C_COMPILER="$d/bin/cc" -DCMAKE_CXX_COMPILER="$d/bin/c++"
         -DCMAKE_AR="$d/bin/ar" -DCMAKE_RANLIB="$d/bin/ranlib")

# 2. the Vulkan loader's source package, through a private apt configuration (its own lists and
#    cache in build/manylinux/apt: the system's apt settings are left alone) whose one source is
#    $LOADER_SUITE's source index on the archive the system's own Debian release comes from
src="$d/src"
mkdir -p "$src"
if ! ls "$src"/vulkan-loader_*.orig.tar.* >/dev/null 2>&1; then
    . /etc/os-release
    uri="$(apt-get indextargets --format '$(REPO_URI)' "Release: ${VERSION_CODENAME:-}" \
           'Identifier: Packages' 2>/dev/null | head -n1)"
    [ -n "$uri" ] || { say "no Debian archive in apt's sources (Release: ${VERSION_CODENAME:-?})"; exit 1; }
    a="$d/apt"
    rm -rf "$a"; mkdir -p "$a/sources.list.d" "$a/lists/partial" "$a/cache/archives/partial"
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$uri" "$LOADER_SUITE" >"$a/sources.list.d/loader.sources"
    aopt=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$a/sources.list.d"
          -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache" -o APT::Sandbox::User=root
          -o Debug::NoLocking=1)
    say "fetching vulkan-loader's source package ($LOADER_SUITE)"
    apt-get "${aopt[@]}" update >>"$log" 2>&1 || fail "apt-get update ($LOADER_SUITE sources)"
    (cd "$src" && apt-get "${aopt[@]}" source --download-only "vulkan-loader/$LOADER_SUITE") >>"$log" 2>&1 ||
        fail "apt-get source vulkan-loader/$LOADER_SUITE"
    rm -rf "$a"         # the index is not needed again: the source stays in $src
fi
orig="$(ls "$src"/vulkan-loader_*.orig.tar.* | tail -n1)"
ver="$(basename "$orig" | sed 's/^vulkan-loader_\(.*\)\.orig\.tar\..*$/\1/')"

# 3. the loader: its bundled Vulkan-Headers installed (the registry drives the loader's generated
#    sources), then the loader itself, stripped, into sysroot/
lstamp="$ver $ZIGLANG $TARGET"
if [ "$(cat "$d/sysroot/.loader" 2>/dev/null)" != "$lstamp" ]; then
    say "building the Vulkan loader $ver (log: build/manylinux/toolchain.log)"
    rm -rf "$d/loader" "$d/sysroot/lib"
    mkdir -p "$d/loader"
    tar -xf "$orig" -C "$d/loader"
    ls_="$d/loader/vulkan-loader-$ver"
    { cmake -S "$ls_/vulkan-headers" -B "$d/loader/headers-build" -DVULKAN_HEADERS_ENABLE_MODULE=OFF \
            -DCMAKE_INSTALL_PREFIX="$d/loader/headers" &&
      cmake --install "$d/loader/headers-build"; } >>"$log" 2>&1 || fail "Vulkan-Headers"
    mkdir -p "$ls_/loader/generated"
    { cmake -S "$ls_" -B "$d/loader/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cc_args[@]}" \
            -DCMAKE_INSTALL_PREFIX="$d/sysroot" -DCMAKE_INSTALL_LIBDIR=lib \
            -DVULKAN_HEADERS_INSTALL_DIR="$d/loader/headers" -DCMAKE_PREFIX_PATH="$d/loader/headers" \
            -DPython3_EXECUTABLE="$py" -DLOADER_CODEGEN=ON -DSYSCONFDIR=/etc \
            -DBUILD_WSI_XCB_SUPPORT=OFF -DBUILD_WSI_XLIB_SUPPORT=OFF -DBUILD_WSI_XLIB_XRANDR_SUPPORT=OFF \
            -DBUILD_WSI_WAYLAND_SUPPORT=OFF -DBUILD_WSI_DIRECTFB_SUPPORT=OFF -DBUILD_TESTS=OFF &&
      cmake --build "$d/loader/build" --target loader_codegen &&
      cmake --build "$d/loader/build" &&
      cmake --install "$d/loader/build" --strip; } >>"$log" 2>&1 || fail "the Vulkan loader"
    echo "$lstamp" >"$d/sysroot/.loader"
fi

# 4. the headers the modules compile against
for h in vulkan vk_video fmt; do
    [ -d "/usr/include/$h" ] || { say "/usr/include/$h missing (apt-get install libvulkan-dev libfmt-dev)"; exit 1; }
    if ! diff -rq "/usr/include/$h" "$d/sysroot/include/$h" >/dev/null 2>&1; then
        rm -rf "$d/sysroot/include/$h"; mkdir -p "$d/sysroot/include"
        cp -r "/usr/include/$h" "$d/sysroot/include/$h"
    fi
done

echo "${cc_args[*]} -DVulkan_INCLUDE_DIR=$d/sysroot/include -DVulkan_LIBRARY=$d/sysroot/lib/libvulkan.so" \
     "-DKOMPUTE_ML_FMT_INCLUDE_DIR=$d/sysroot/include"
