#!/bin/sh
# compute-sanitizer's memcheck, racecheck, initcheck and synccheck on every registered kernel,
# eagerly and in CUDA graphs, over small scenarios that reach every code path: one and two
# row tiles and eight (heads 1, 16, 64), 104 rows (not a multiple of 16), empty prefixes,
# padded graph buckets and replays with fewer draft tokens, page 64 fragmented, a mask with
# hidden prefix columns, and a graph captured at 24k tokens of context and replayed at 500 and
# 8000 (so that the 72-row kernels of mla_wgmma and mla_onepass run each of their cuts: one CTA,
# CTA quads and CTA pairs a unit), and 160 short 36-row requests (mla_wgmma's 64-row units on one
# CTA, rows on M, some written to o directly and some cut), and 3 requests of the 64-node EAGLE
# tree at 5121 tokens (8 units of 64 rows each, whose cut mla_wgmma's 64-row walk aligns to its
# spans, cut_span in kernels/mla_schedule.cuh; other scenario files may be named instead).
# Needs a GPU.
# Writes OUTDIR/sanitize-TOOL.txt and a summary, OUTDIR/sanitize-summary.txt; exits 1 if any
# tool reported an error.
# usage: scripts/sanitize.sh BIN OUTDIR [SCENARIO_FILE...]   (default: tests/data/sanitize_paths.json)
set -u
bin=${1:?usage: scripts/sanitize.sh BIN OUTDIR [SCENARIO_FILE...]}
out=${2:?usage: scripts/sanitize.sh BIN OUTDIR [SCENARIO_FILE...]}
shift 2
[ $# -gt 0 ] || set -- tests/data/sanitize_paths.json
mkdir -p "$out"
status=0
summary="$out/sanitize-summary.txt"
case " $* " in
*" -k "* | *" --kernel "*) which="the kernels named with -k" ;;
*) which="every registered kernel" ;;
esac
echo "compute-sanitizer on $*: $which, eager and graph" >"$summary"
"$bin" list-kernels >>"$summary"
for tool in memcheck racecheck initcheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" "$@" -q --no-ceilings --gpu-timeout 0 \
        --no-cpu-model --iterations 1 --cold-l2 off >"$out/sanitize-$tool.txt" 2>&1
    rc=$?
    {
        echo "== $tool: exit $rc"
        grep -E "records:" "$out/sanitize-$tool.txt"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitize-$tool.txt"
    } >>"$summary"
    [ $rc -eq 0 ] || status=1
done
cat "$summary"
exit $status
