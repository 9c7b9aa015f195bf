#!/bin/sh
# Fetches SGLang releases and every package their extend-attention kernel module imports when it
# is loaded, as wheels for another machine's Python (the GPU machine reaches no registry):
# DIR/sglang-VERSION/ holds each release, DIR/deps/ what they import. There:
#     pip install --no-deps --target T DIR/sglang-VERSION/*.whl DIR/deps/*.whl
#     PYTHONPATH=T scripts/triton_baseline.py BUNDLES --impl sglang --out DUMP
# (results/h200/README.md shows the whole run).
#
# The list below is what `import sglang.kernels.ops.attention.extend_attention` (0.5.23) and
# `import sglang.srt.layers.attention.triton_ops.extend_attention` (0.5.9) needed beyond torch,
# triton and numpy, found by importing them with nothing else installed and adding what failed
# until the import succeeded. torch, triton and numpy are the GPU machine's own.
# usage: scripts/sglang_wheels.sh DIR VERSION...   (PYTHON_VERSION=3.12 by default)
set -eu
usage="usage: scripts/sglang_wheels.sh DIR VERSION..."
dir=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
py=${PYTHON_VERSION:-3.12}
deps="orjson psutil pybase64 requests urllib3 idna certifi packaging pillow starlette anyio msgspec pydantic
pydantic_core pyzmq tqdm ipython traitlets pygments typing_inspection aiohttp multidict attrs yarl propcache
aiohappyeyeballs aiosignal frozenlist"
fetch() { # DEST SPEC...
    dest=$1
    shift
    mkdir -p "$dest"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version "$py" --implementation cp \
        --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$dest" "$@"
}
# shellcheck disable=SC2086
fetch "$dir/deps" $deps
for v in "$@"; do fetch "$dir/sglang-$v" "sglang==$v"; done
echo "$(ls "$dir"/*/*.whl | wc -l) wheels for Python $py in $dir, $(du -sh "$dir" | cut -f1)"
