#!/bin/sh
# The compiler's resource report for every kernel file and target architecture: registers,
# spills, stack frame and static shared memory per kernel instantiation (ptxas -v). Needs only
# nvcc, c++filt and python3, no GPU. usage: scripts/resource_report.sh [ARCH...]  (default: 80 90 120;
# files named *_sm90a.cu: sm_90a only;
# verify_attn_mla_onepass_ws.cu: sm_90a and sm_120a alone, in place of sm_90 and sm_120)
set -eu
cd "$(dirname "$0")/.."
archs=${*:-80 90 120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| file | arch | kernel | registers | spill stores / loads (bytes) | stack frame (bytes) | static smem (bytes) |"
echo "|---|---|---|---:|---:|---:|---:|"
for f in kernels/verify_attn_*.cu; do
    # Hopper-only files are built for sm_90a alone (meson.build); on other targets they are empty.
    # mla_onepass_ws is built for the arch-specific targets of sm_90, sm_100 and sm_120 alone (setmaxnreg).
    case $f in
    *_sm90a.cu) file_archs=90a ;;
    */verify_attn_mla_onepass_ws.cu) file_archs=$(for a in $archs; do case $a in 90 | 100 | 120) echo "${a}a" ;; esac; done) ;;
    *) file_archs=$archs ;;
    esac
    for a in $file_archs; do
        nvcc -std=c++17 -O3 -gencode=arch=compute_$a,code=sm_$a -Ikernels -Isrc -Xptxas -v -c "$f" \
            -o "$tmp/k.o" >"$tmp/log" 2>&1 || { echo "nvcc failed on $f for sm_$a" >&2; cat "$tmp/log" >&2; exit 1; }
        python3 - "$(basename "$f")" "sm_$a" "$tmp/log" <<'PY'
import re, subprocess, sys
name, arch, log = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().splitlines()
fn, props = None, (0, 0, 0)
for line in log:
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        fn, props = m.group(1), (0, 0, 0)
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m:
        props = tuple(int(x) for x in m.groups())
    m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem|$)", line)
    if m and fn:
        pretty = subprocess.run(["c++filt", fn], capture_output=True, text=True).stdout.strip()
        pretty = pretty.replace("(anonymous namespace)::", "").replace("void ", "")
        pretty = re.sub(r"\(.*", "", pretty)
        print(f"| {name} | {arch} | `{pretty}` | {m.group(1)} | {props[1]} / {props[2]} | {props[0]} | {m.group(2) or 0} |")
        fn = None
PY
    done
done
