#!/bin/sh
# Builds verifybench on a GPU machine and proves it there, writing everything under OUTDIR:
#   build            fat binary for sm_80, sm_90 and sm_120 (cuobjdump lists the ELF images)
#   tiny             small scenarios (mask_as_written.json, large_values.json and
#                    many_requests.json too) with --verify-generator (host and GPU inputs
#                    bit-identical)
#   capture          the test-only sync_in_launch kernel must be rejected as not capture-safe
#   faults           test-only kernels that fault on the device, fail to launch (at once, or when
#                    their graph is instantiated: the next kernel must not inherit it) and never finish:
#                    exit 4, every record written (the faulting one as ERROR with its CUDA error,
#                    the hung one as timed out after --gpu-timeout, the rest run or marked not
#                    run), the JSON valid
#   sanitize         compute-sanitizer memcheck, racecheck, initcheck and synccheck on the small scenarios
#   paths            the same four tools on tests/data/sanitize_paths.json (every walk and cut of the
#                    scheduled kernels), mla_wgmma, mla_onepass and mla_onepass_ws only: OUTDIR/paths/
#                    (and on tests/data/sanitize_overlap.json, mla_onepass_ws's overlapped walk:
#                    OUTDIR/paths-overlap/)
#   configs          every shipped scenario: results.json and summary.md (CONFIGS_KERNELS="A B":
#                    those kernels alone, for a run split to fit a time limit; join the parts'
#                    results.json with `verifybench merge`)
#   targets          scripts/target_shapes.sh for mla_wgmma, mla_onepass and mla_onepass_ws: OUTDIR/targets/
#   baseline         export every scenario's bundle, run scripts/triton_baseline.py on them
#                    (triton_baseline.json) and, with SGLANG_WHEELS=DIR (scripts/sglang_wheels.sh),
#                    SGLang's own kernel of every release there (triton_sglang-VERSION.json); the
#                    speedup table against all of them (speedup.md, speedup.csv)
#   tests            the meson test suites, on this machine too
#   regress          (only when named) scripts/regress.py: this tree against a base tree unpacked
#                    here with git archive, REGRESS_BASE_SRC=DIR named REGRESS_BASE=NAME, on
#                    $REGRESS_ARGS (default: every shipped scenario): OUTDIR/regress.md and
#                    regress.json, the runs under OUTDIR/regress-runs/; the base builds in build-gpu/
#   profile          Nsight Compute on one launch of $PROFILE_KERNEL (mla_onepass unless set; its
#                    shared-memory wavefronts and pipe use among the sections) at
#                    bs 8 x 91k: OUTDIR/ncu-KERNEL.prof
# Logs end up in OUTDIR/logs.tgz; OUTDIR keeps the results, the summaries and proof.log.
# A stage that runs the binary first checks that it starts (built, its libraries found): if not,
# one line in proof.log says why and the proof exits 4.
# usage: scripts/gpu_proof.sh OUTDIR [STAGE...]   (default: every stage, in that order)
set -u
out=${1:?usage: scripts/gpu_proof.sh OUTDIR [STAGE...]}
shift
stages=${*:-build tiny capture faults sanitize paths configs targets baseline tests profile}
bundles=${BUNDLE_DIR:-/tmp/verifybench-bundles}
mkdir -p "$out"
bin=build-gpu/verifybench
status=0

note() { printf '%s\n' "$*" | tee -a "$out/proof.log"; }
# Wheels into directory T without their dependencies (pip's --target; unzipped where pip is absent).
install_wheels() {
    t=$1
    shift
    if python3 -m pip --version >/dev/null 2>&1; then
        python3 -m pip install --quiet --no-deps --no-index --target "$t" "$@"
    else
        for whl in "$@"; do python3 -m zipfile -e "$whl" "$t" || return 1; done
    fi
}
stage() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
# speedup.md and speedup.csv (and report.txt) of results.json against the dumps named (--baseline F...).
speedup_tables() {
    "$bin" report "$out/results.json" "$@" --speedup "$out/speedup.md" >"$out/report.txt" 2>&1 &&
        "$bin" report "$out/results.json" "$@" --speedup "$out/speedup.csv" >/dev/null 2>&1
}

if stage build; then
    note "== build"
    { [ -d build-gpu ] || meson setup build-gpu --buildtype=release; } >"$out/build.log" 2>&1 &&
        ninja -C build-gpu >>"$out/build.log" 2>&1 || { note "build failed"; tail -30 "$out/build.log"; exit 4; }
    cuobjdump --list-elf "$bin" | tee "$out/elf.txt"
    for a in sm_80 sm_90 sm_120; do
        grep -q "$a" "$out/elf.txt" && note "fat binary has $a" || { note "MISSING $a"; status=1; }
    done
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.txt"
    # The commit the results will name must be the tree's (a stale copy's HEAD is not).
    msg=$(sh scripts/check_commit.sh "${VB_COMMIT:-}") || status=1
    note "$msg"
fi

# Every stage after the build runs the binary: if it does not start (not built, or a library
# missing from the loader's path), say why once and stop, rather than letting each stage fail with
# a reason buried in its log.
for st in tiny capture faults sanitize paths configs targets baseline profile; do
    stage "$st" || continue
    if [ ! -x "$bin" ]; then
        note "$bin is not built: run the build stage first"
        note "proof status: 4"
        exit 4
    fi
    if ! version=$("$bin" --version 2>&1); then
        note "$bin does not run: $(printf '%s\n' "$version" | head -1)"
        note "proof status: 4"
        exit 4
    fi
    break
done

if stage tiny; then
    note "== tiny scenarios, generator bits checked against the host"
    "$bin" tests/data/tiny.json tests/data/mask_as_written.json tests/data/large_values.json tests/data/many_requests.json \
        --verify-generator --cpu-model -q \
        --json "$out/tiny.json" >"$out/tiny.txt" 2>&1
    rc=$?; cat "$out/tiny.txt"; note "tiny: exit $rc"; [ $rc -eq 0 ] || status=1
fi

if stage capture; then
    note "== capture check must fail for a kernel that syncs inside its launch"
    "$bin" tests/data/tiny.json -k sync_in_launch -q --no-ceilings >"$out/capture.txt" 2>&1
    rc=$?; cat "$out/capture.txt"
    if [ $rc -eq 1 ] && grep -q "FAIL.*sync_in_launch graph: not capture-safe" "$out/capture.txt"; then
        note "capture: rejected as expected (exit 1)"
    else
        note "capture: NOT rejected (exit $rc)"; status=1
    fi
fi

if stage faults; then
    note "== fault paths: an illegal address, a launch the runtime refuses, a kernel that never ends"
    "$bin" tests/data/tiny.json -k mla_onepass -k fault_address -k naive_gpu -q --no-ceilings --iterations 1 \
        --json "$out/fault-address.json" >"$out/faults.txt" 2>&1
    rc_a=$?
    "$bin" tests/data/tiny.json -k fail_launch -k naive_gpu -q --no-ceilings --iterations 1 \
        --json "$out/fail-launch.json" >>"$out/faults.txt" 2>&1
    rc_b=$?
    # Refused at launch, and in a graph at capture or instantiation: that error must not reach
    # naive_gpu's capture. scripts/fault_records.py holds what each run must report.
    "$bin" tests/data/tiny.json -k out_of_registers -k naive_gpu -q --no-ceilings --iterations 1 \
        --json "$out/out-of-registers.json" >>"$out/faults.txt" 2>&1
    rc_r=$?
    python3 scripts/fault_records.py faults "$out/fault-address.json" "$out/fail-launch.json" \
        "$out/out-of-registers.json" >>"$out/faults.txt" 2>&1
    rc_c=$?
    # A kernel that never finishes: the watchdog reports it after --gpu-timeout (timeout(1) is
    # only the stage's own guard, should the watchdog fail).
    timeout -s KILL 120 "$bin" tests/data/tiny.json -k naive_gpu -k hang -q --no-ceilings --iterations 1 \
        --gpu-timeout 10 --json "$out/hang.json" >>"$out/faults.txt" 2>&1
    rc_d=$?
    python3 scripts/fault_records.py hang "$out/hang.json" >>"$out/faults.txt" 2>&1
    rc_e=$?
    tail -4 "$out/faults.txt"
    if [ $rc_a -eq 4 ] && [ $rc_b -eq 4 ] && [ $rc_r -eq 4 ] && [ $rc_c -eq 0 ] && [ $rc_d -eq 4 ] && [ $rc_e -eq 0 ]; then
        note "faults: exit 4 all four, records complete"
    else note "faults: NOT as expected (exits $rc_a $rc_b $rc_r $rc_d, checks $rc_c $rc_e)"; status=1; fi
fi

if stage sanitize; then
    note "== compute-sanitizer memcheck, racecheck, initcheck, synccheck"
    scripts/sanitize.sh "$bin" "$out" tests/data/tiny.json tests/data/mask_as_written.json >>"$out/proof.log" 2>&1
    rc=$?; note "sanitize: exit $rc"; [ $rc -eq 0 ] || status=1
fi

if stage paths; then
    note "== compute-sanitizer on sanitize_paths.json, the scheduled kernels"
    scripts/sanitize.sh "$bin" "$out/paths" tests/data/sanitize_paths.json -k mla_wgmma -k mla_onepass -k mla_onepass_ws \
        >"$out/paths.txt" 2>&1
    rc=$?; grep -E "^== |records:|SUMMARY" "$out/paths/sanitize-summary.txt" | tee -a "$out/proof.log"
    note "paths: exit $rc"; [ $rc -eq 0 ] || status=1
    # mla_onepass_ws overlaps only at spans of more than 8 positions (kOverlapSpan). Of the
    # scenarios above, by the schedule's arithmetic, only the 24k- and 30k-token launches at 16
    # heads (72-row units) and eagle64's (64-row) reach that, and only on enough of a GPU's SMs:
    # one launch of 100k tokens does at up to 198 SMs, with 72-row units and with 64-row ones.
    scripts/sanitize.sh "$bin" "$out/paths-overlap" tests/data/sanitize_overlap.json -k mla_onepass_ws \
        >"$out/paths-overlap.txt" 2>&1
    rc=$?; grep -E "^== |records:|SUMMARY" "$out/paths-overlap/sanitize-summary.txt" | tee -a "$out/proof.log"
    note "paths (the overlapped walk): exit $rc"; [ $rc -eq 0 ] || status=1
fi

if stage configs; then
    kargs=
    for k in ${CONFIGS_KERNELS:-}; do kargs="$kargs -k $k"; done
    note "== every shipped scenario${CONFIGS_KERNELS:+, kernels $CONFIGS_KERNELS alone (one part of a split run)}"
    # shellcheck disable=SC2086
    "$bin" configs/*.json -q $kargs --json "$out/results.json" --markdown "$out/summary.md" >"$out/configs.txt" 2>&1
    rc=$?; tail -40 "$out/configs.txt"; note "configs: exit $rc"; [ $rc -eq 0 ] || status=1
fi

if stage targets; then
    note "== the target shapes, mla_wgmma, mla_onepass and mla_onepass_ws"
    mkdir -p "$out/targets"
    scripts/target_shapes.sh "$bin" "$out/targets" mla_wgmma mla_onepass mla_onepass_ws >"$out/targets/shares.txt" 2>&1
    rc=$?; cat "$out/targets/shares.txt"; note "targets: exit $rc"; [ $rc -eq 0 ] || status=1
fi
if stage baseline; then
    note "== Triton baselines on the same inputs"
    rm -rf "$bundles"
    "$bin" export --out "$bundles" configs/*.json -q >"$out/export.txt" 2>&1 ||
        { note "export failed: $(tail -1 "$out/export.txt")"; status=1; }
    PYTHONUNBUFFERED=1 python3 scripts/triton_baseline.py "$bundles" --out "$out/triton_baseline.json" \
        >"$out/triton.txt" 2>&1
    rc=$?; tail -3 "$out/triton.txt"; note "triton baseline (builtin): exit $rc"; [ $rc -eq 0 ] || status=1
    set -- --baseline "$out/triton_baseline.json"
    # The tables are written after every dump, so that a SGLang release that never finishes (a
    # time limit, a hang) leaves the tables of the dumps before it rather than none.
    speedup_tables "$@" >/dev/null
    # SGLang's own kernel, for every release scripts/sglang_wheels.sh fetched into $SGLANG_WHEELS.
    for w in ${SGLANG_WHEELS:+"$SGLANG_WHEELS"/sglang-*}; do
        v=${w##*/sglang-}
        t=/tmp/verifybench-sglang-$v
        rm -rf "$t"
        install_wheels "$t" "$w"/*.whl "$SGLANG_WHEELS"/deps/*.whl >"$out/sglang-$v-install.txt" 2>&1 ||
            { note "sglang $v: install failed"; tail -3 "$out/sglang-$v-install.txt"; status=1; continue; }
        PYTHONPATH=$t PYTHONUNBUFFERED=1 python3 scripts/triton_baseline.py "$bundles" --impl sglang \
            --out "$out/triton_sglang-$v.json" >"$out/triton-sglang-$v.txt" 2>&1
        rc=$?; head -1 "$out/triton-sglang-$v.txt"; tail -2 "$out/triton-sglang-$v.txt"
        note "triton baseline (SGLang $v): exit $rc"
        if [ $rc -eq 0 ]; then
            set -- "$@" --baseline "$out/triton_sglang-$v.json"
            speedup_tables "$@" >/dev/null
        else
            status=1
        fi
    done
    speedup_tables "$@"
    rc=$?; grep -A40 "speedup against" "$out/report.txt" | tail -40; note "speedup: exit $rc"; [ $rc -eq 0 ] || status=1
    rm -rf "$bundles"
fi

if stage tests; then
    note "== meson test"
    meson test -C build-gpu --print-errorlogs >"$out/tests.txt" 2>&1
    rc=$?; grep -E "^ *[0-9]+/[0-9]+ " "$out/tests.txt" | tee -a "$out/proof.log"; note "tests: exit $rc"
    [ $rc -eq 0 ] || status=1
fi

if stage regress; then
    note "== regress: this tree against ${REGRESS_BASE:-base} (scripts/regress.py)"
    if [ -z "${REGRESS_BASE_SRC:-}" ]; then
        note "regress: NOT run: set REGRESS_BASE_SRC=DIR (a base tree: git archive REV | tar -x -C DIR)"; status=1
    else
        # shellcheck disable=SC2086
        python3 scripts/regress.py "${REGRESS_BASE:-base}" --base-src "$REGRESS_BASE_SRC" --build build-gpu \
            --out build-gpu/regress --markdown "$out/regress.md" -- ${REGRESS_ARGS:-configs/*.json -q} \
            >"$out/regress.txt" 2>&1
        rc=$?; tail -12 "$out/regress.txt"
        cp build-gpu/regress/regress.json "$out/" 2>/dev/null
        rm -rf "$out/regress-runs" && cp -r build-gpu/regress/runs "$out/regress-runs" 2>/dev/null
        note "regress: exit $rc (0: no regression, 1: a regression, 2: no verdict)"; [ $rc -eq 0 ] || status=1
    fi
fi

if stage profile; then
    pk=${PROFILE_KERNEL:-mla_onepass}
    # The device function each entry launches at 72 rows: mla_onepass_ws's is onepass_rr_kernel,
    # which the entry's name alone would not match.
    case $pk in
    mla_onepass_ws) fn=onepass_rr_kernel ;;
    *) fn=${pk#mla_}_kernel ;;
    esac
    note "== ncu: one $pk launch ($fn) at bs 8 x 91k"
    ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
        --section MemoryWorkloadAnalysis_Tables --section ComputeWorkloadAnalysis \
        --section SourceCounters -k "regex:$fn" -c 1 "$bin" configs/context_lengths.json \
        -f "size=8,batch.prefix_len=91000" -k "$pk" -q --no-ceilings --gpu-timeout 0 --iterations 3 --cold-l2 off \
        >"$out/ncu-$pk.prof" 2>&1
    note "ncu: exit $?"
fi

note "proof status: $status"
# Only the logs the stages that ran wrote: with one missing, tar would fail and leave them all.
# shellcheck disable=SC2086
(cd "$out" && logs=$(ls ./*.txt ./*.log tiny.json 2>/dev/null; true) && tar czf logs.tgz $logs &&
    rm -f ./*.txt build.log tiny.json)
exit $status
