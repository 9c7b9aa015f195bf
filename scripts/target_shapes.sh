#!/bin/sh
# Runs the shapes the kernel work is measured on (results/h200/NOTES.md) for the named
# kernels, and prints one line per record: time, the floor and the share of the read
# ceiling. Correctness is checked as in every run; the exit code is verifybench's.
# usage: scripts/target_shapes.sh BIN OUTDIR KERNEL...   (e.g. build-gpu/verifybench out mla_onepass)
set -u
bin=${1:?usage: scripts/target_shapes.sh BIN OUTDIR KERNEL...}
out=${2:?usage: scripts/target_shapes.sh BIN OUTDIR KERNEL...}
shift 2
mkdir -p "$out"
ks=""
for k in "$@"; do ks="$ks -k $k"; done
# shellcheck disable=SC2086
"$bin" configs/context_lengths.json configs/long_context_200k.json configs/batch32_ragged.json configs/trees.json \
    -f "size=8,batch.prefix_len=91000" -f "size=8,batch.prefix_len=23000" -f "size=8,batch.prefix_len=4096" \
    -f "size=1,batch.prefix_len=512" -f "200k" -f "bs32-ddtree9-4k" -f "tree-eagle64" \
    $ks -q --cold-l2 off --json "$out/targets.json" >"$out/targets.txt" 2>&1
rc=$?
python3 - "$out/targets.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ceil = d["ceilings"]
wg = f", wgmma ceiling {ceil['wgmma_bf16_tflops']:.0f} TFLOP/s" if ceil.get("wgmma_bf16_tflops") else ""
print(f"read ceiling {ceil['read_gbps']:.0f} GB/s, mma ceiling {ceil['mma_bf16_tflops']:.0f} TFLOP/s{wg}")
for s in d["scenarios"]:
  for r in s.get("records", []):
    h = (r.get("timing") or {}).get("hot") or {}
    med = h.get("median_us")
    if med:  # floor_us, floor_ratio: the harness's max(bytes / read ceiling, flops / fastest tensor ceiling)
        print(f"{s['name'][:44]:44s} {r['variant'][:12]:12s} {r['kernel']:14s} {r['mode']:5s} {r['status']:5s} "
              f"{med:9.1f} us  floor {h['floor_us']:8.1f}  x{h['floor_ratio']:5.2f}  bw {100 * (h.get('bw_share') or 0):4.1f}%"
              f"  mma {100 * (h.get('mma_share') or 0):4.1f}%  wgmma {100 * (h.get('wgmma_share') or 0):4.1f}%")
    else:
        print(f"{s['name'][:44]:44s} {r['variant'][:12]:12s} {r['kernel']:14s} {r['mode']:5s} {r['status']:5s} {r.get('message','')[:80]}")
PY
exit $rc
