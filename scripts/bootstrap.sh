#!/bin/sh
# Installs what a fresh Debian machine lacks (meson, ninja, pkg-config, cJSON; numpy,
# matplotlib and nvdisasm for the Python scripts' tests) and builds
# verifybench into build/. Safe to run again: it installs and configures only what is missing.
# The CUDA toolkit (nvcc, cudart, cuRAND; 12.8 or newer for sm_120) must already be there.
set -eu
cd "$(dirname "$0")/.."

missing=""
command -v meson >/dev/null 2>&1 || missing="$missing meson"
command -v ninja >/dev/null 2>&1 || missing="$missing ninja-build"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
pkg-config --exists libcjson 2>/dev/null || missing="$missing libcjson-dev"
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "bootstrap: installing$missing"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

# The Python scripts' tests need numpy and matplotlib in the python3 on PATH (which need not
# be Debian's), so they come from PyPI; without them those tests are skipped, nothing fails.
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import numpy, matplotlib' 2>/dev/null; then
    echo "bootstrap: installing numpy and matplotlib for python3 (the Python scripts' tests)"
    python3 -m pip install --quiet --disable-pip-version-check numpy matplotlib 2>/dev/null ||
        echo "bootstrap: could not install numpy and matplotlib: their tests will be skipped" >&2
fi

# scripts/sass_diff.py (and its test) disassemble with nvdisasm, which a CUDA toolkit trimmed to
# the compiler lacks; PyPI's wheel carries it. Without it that test checks its fixtures only.
if command -v python3 >/dev/null 2>&1 &&
    ! python3 -c 'import sys; sys.path.insert(0, "scripts"); import sass_diff; sass_diff.find_nvdisasm(None)' 2>/dev/null; then
    echo "bootstrap: installing nvdisasm for python3 (scripts/sass_diff.py)"
    python3 -m pip install --quiet --disable-pip-version-check 'nvidia-cuda-nvdisasm<14' 2>/dev/null ||
        echo "bootstrap: could not install nvdisasm: the sass-diff test will check its fixtures only" >&2
fi

if ! command -v nvcc >/dev/null 2>&1; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
        PATH=/usr/local/cuda/bin:$PATH
        export PATH
    else
        echo "bootstrap: nvcc not found: install the CUDA toolkit (12.8 or newer builds sm_120)" >&2
        exit 1
    fi
fi

[ -f build/build.ninja ] || meson setup build --buildtype=release
ninja -C build
