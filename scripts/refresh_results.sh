#!/bin/sh
# Turns a GPU machine's proof run (scripts/gpu_proof.sh OUTDIR build tiny capture sanitize paths
# configs targets) into the committed results directory, on any machine (no GPU):
#   - RESULTS_DIR's results.json, summary.md and proof.log from OUTDIR; sanitize.txt from
#     OUTDIR/logs.tgz; sanitize-paths.txt from OUTDIR/paths/ when the paths stage ran;
#   - speedup.md and speedup.csv against every Triton dump RESULTS_DIR holds
#     (triton_baseline.json, triton_sglang-*.json), and the plots against the newest SGLang's;
#   - then prints `verifybench compare` of the old results.json against the new one (the verdict
#     line included), the README's headline table (scripts/headline_table.py) and the write-up
#     facts (scripts/results_facts.py --old).
# The README's paragraph and results/h200/README.md stay for a person to write from what it prints.
# Exits 2 on a missing input or an incomplete run, else with `verifybench compare`'s status (1: a regression).
# usage: scripts/refresh_results.sh OUTDIR RESULTS_DIR   (BIN=build/verifybench unless set)
set -u
src=${1:?usage: scripts/refresh_results.sh OUTDIR RESULTS_DIR}
dst=${2:?usage: scripts/refresh_results.sh OUTDIR RESULTS_DIR}
bin=${BIN:-build/verifybench}
here=$(dirname "$0")
fail() { echo "refresh_results: $*" >&2; exit 2; }

[ -x "$bin" ] || fail "$bin: no verifybench binary (build it, or set BIN)"
for f in results.json summary.md proof.log logs.tgz; do
    [ -f "$src/$f" ] || fail "$src/$f: missing (run gpu_proof.sh with the configs stage into $src)"
done
[ -d "$dst" ] || fail "$dst: no such directory"
# A run cut short by a signal, or a checkpoint of one that never finished, is not a result set.
cut=$(python3 "$(dirname "$0")/results_file.py" --incomplete "$src/results.json") ||
    fail "$src/results.json: not a results file"
[ -z "$cut" ] || fail "$src/results.json: complete: false ($cut): run the configs stage again"
builtin="$dst/triton_baseline.json"
[ -f "$builtin" ] || fail "$builtin: missing (the builtin Triton dump the tables compare against)"
sglang=$(for f in "$dst"/triton_sglang-*.json; do [ -f "$f" ] && echo "$f"; done | sort -V | tail -1)
[ -n "$sglang" ] || fail "$dst: no triton_sglang-VERSION.json"

tmp=$(mktemp -d) || fail "no temporary directory"
trap 'rm -rf "$tmp"' EXIT
old="$tmp/old-results.json"
[ -f "$dst/results.json" ] && cp "$dst/results.json" "$old"

cp "$src/results.json" "$src/summary.md" "$src/proof.log" "$dst/" || fail "copying into $dst failed"
if tar xzf "$src/logs.tgz" -C "$tmp" ./sanitize-summary.txt 2>/dev/null; then
    cp "$tmp/sanitize-summary.txt" "$dst/sanitize.txt"
else
    echo "refresh_results: $src/logs.tgz has no sanitize-summary.txt: sanitize.txt left as it was" >&2
fi
if [ -f "$src/paths/sanitize-summary.txt" ]; then
    cp "$src/paths/sanitize-summary.txt" "$dst/sanitize-paths.txt"
else
    echo "refresh_results: no $src/paths/ (the paths stage did not run): sanitize-paths.txt left as it was" >&2
fi

# From inside RESULTS_DIR, so that the tables name each dump by its file name alone.
abs_bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
(
    cd "$dst" || exit 1
    set --
    for d in triton_baseline.json triton_sglang-*.json; do set -- "$@" --baseline "$d"; done
    "$abs_bin" report results.json "$@" --speedup speedup.md >/dev/null &&
        "$abs_bin" report results.json "$@" --speedup speedup.csv >/dev/null
) || fail "verifybench report failed on $dst/results.json"
if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$here/plot_results.py" "$dst/results.json" --baseline "$sglang" --out "$dst" ||
        fail "plot_results.py failed"
else
    echo "refresh_results: matplotlib is not installed: the plots are left as they were" >&2
fi

status=0
set -- "$dst/results.json"
if [ -f "$old" ]; then
    echo "== verifybench compare, the previous results against these"
    "$bin" compare "$old" "$dst/results.json" --threshold 5
    status=$?
    set -- "$@" --old "$old"
fi
echo "== headline table (README.md)"
python3 "$here/headline_table.py" "$dst/results.json" --sglang "$sglang" --builtin "$builtin" || status=2
echo "== facts"
python3 "$here/results_facts.py" "$@" || status=2
exit $status
