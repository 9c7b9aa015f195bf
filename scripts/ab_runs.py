#!/usr/bin/env python3
"""A/B timing of verifybench builds on one machine: runs A, B, A, B, ... (ROUNDS times each)
with the same arguments, then prints one line per timed record that both builds measured: A's
and B's time (the median over rounds of each run's hot median, or with --timing cold of its
cold one: L2 flushed before each launch, as when the KV comes from memory; the runs must then
time cold, e.g. --cold-l2 on), B / A, and the range of each over the rounds; then the geometric
mean of B / A per kernel and mode. Interleaving puts both
builds under the same clocks, temperature and memory placement: on an H200 one build's
long-context times moved by 0.2-3% between runs of a session and by 1-3% between machine
starts, as much as many kernel changes. More builds (C, D, ...) join the interleaving (A, B, C,
A, B, C, ...) and each gets its own table against A, so that several variants cost one run of
A per round, not one per variant.

Correctness is checked in every run as always; the exit code is the worst of the runs' (1 when
a check failed in either build, 4 on a CUDA error, 128 + N for a run a signal stopped; 2 for bad
usage or a run that left no results to compare), and a
record whose status differs between the builds is listed whatever its time. A run that did not
finish (killed, leaving its checkpoint, or stopped by Ctrl-C) ends the runs there: the rounds
every build finished are compared, and ab.json's "rounds" says how many. When no round is whole
but every build ran part of the first (a time limit that fell in B's first run), the records
every build finished in it are compared instead, and ab.json says "rounds": 0, "partial": true.

SIGINT or SIGTERM (Ctrl-C, `timeout -s INT`) stops the runs after the one under way: it is
passed to that run once (each run has its own process group, so a signal to the whole group
is not a second one, which would end it at once), the run stops at its next safe point and
writes what it finished, and the comparison and ab.json are made from that. A second signal
is passed on too and ends the run at once; if this script is killed, its run gets SIGTERM.
The exit code is then 128 + the signal's number.

usage: scripts/ab_runs.py BIN_A BIN_B [BIN_C ...] OUTDIR [--rounds N] [--mode graph|eager|both]
                         [--timing hot|cold] -- ARGS...
  e.g. scripts/ab_runs.py old/build/verifybench build/verifybench ab --rounds 2 -- \\
       configs/context_lengths.json -f size=8 -k mla_wgmma -q --cold-l2 off
(build the old revision beside the new one: git worktree add ../old REV && cd ../old &&
 scripts/bootstrap.sh). Writes OUTDIR/a_1.json, b_1.json, ... (each run's stdout beside it as
.txt) and OUTDIR/ab.json (B's table and geometric means at the top level, every build's under
"builds").
"""
import argparse
import json
import math
import os
import signal
import statistics
import string
import subprocess
import sys
import time
from typing import NamedTuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_file  # noqa: E402  (the schema check and whether a run is whole, shared)

USAGE = ("usage: scripts/ab_runs.py BIN_A BIN_B [BIN_C ...] OUTDIR [--rounds N] [--mode graph|eager|both] "
         "[--timing hot|cold] -- ARGS...")
MAX_BUILDS = 8


def sides(builds):
    """The builds' letters: 'a', 'b', ..."""
    return list(string.ascii_lowercase[:builds])


def run_order(rounds, builds=2, first=1):
    """The runs, interleaved: ('a', 1), ('b', 1), ..., ('a', 2), ... (from round FIRST)"""
    return [(side, i) for i in range(first, rounds + 1) for side in sides(builds)]


def records(d, modes, timing="hot"):
    """(scenario, variant, kernel, mode) -> (status, the timing's median or None) of one results
    file's contents; timing: "hot" or "cold"."""
    out = {}
    for s in d.get("scenarios", []):
        for r in s.get("records", []):
            if r["mode"] not in modes:
                continue
            t = ((r.get("timing") or {}).get(timing)) or {}
            out[(s["name"], r["variant"], r["kernel"], r["mode"])] = (r["status"], t.get("median_us"))
    return out


def compare(runs_a, runs_b):
    """Rows for the records of both builds: key, A and B (median over rounds), B / A, ranges, and
    the statuses when they differ. runs_*: one records() dict per round."""
    rows = []
    keys = sorted(set().union(*runs_a, *runs_b))
    for k in keys:
        sa = {r[k][0] for r in runs_a if k in r}
        sb = {r[k][0] for r in runs_b if k in r}
        ta = [r[k][1] for r in runs_a if k in r and r[k][1]]
        tb = [r[k][1] for r in runs_b if k in r and r[k][1]]
        row = {"scenario": k[0], "variant": k[1], "kernel": k[2], "mode": k[3],
               "status_a": "/".join(sorted(sa)) or "-", "status_b": "/".join(sorted(sb)) or "-"}
        if ta and tb:
            a, b = statistics.median(ta), statistics.median(tb)
            row.update(a_us=a, b_us=b, ratio=b / a, a_range=[min(ta), max(ta)], b_range=[min(tb), max(tb)])
        elif row["status_a"] == row["status_b"]:
            continue  # untimed in both (no GPU, skipped, unsupported): nothing to compare
        rows.append(row)
    return rows


def geomeans(rows):
    """{(kernel, mode): (geometric mean of B / A, records)} over the rows both builds timed: one
    number per kernel for a change that moves many records a little."""
    logs = {}
    for r in rows:
        if "ratio" in r:
            logs.setdefault((r["kernel"], r["mode"]), []).append(math.log(r["ratio"]))
    return {k: (math.exp(sum(v) / len(v)), len(v)) for k, v in sorted(logs.items())}


def format_geomeans(means, side="B"):
    return f"geomean {side} / A: " + ", ".join(f"{k} {m} {g:.3f} ({n})" for (k, m), (g, n) in means.items()) if means else ""


def us(t):
    """A time in µs: two decimals under 100 µs, where a change of a few tenths is the news."""
    return f"{t:.2f}" if t < 100 else f"{t:.1f}"


def format_rows(rows, side="B"):
    # The scenario column is as wide as its longest name: swept scenarios differ at the end
    # (few-heads/model.heads=4,batch.size=1,batch.prefix_len=512 against ...=32768).
    w = max([len("scenario")] + [len(r["scenario"]) for r in rows])
    lines = [f"{'scenario':{w}s} {'variant':12s} {'kernel':12s} {'mode':5s} {'A us':>9s} {side + ' us':>9s} "
             f"{side + '/A':>6s}  A range, {side} range"]
    for r in rows:
        head = f"{r['scenario']:{w}s} {r['variant'][:12]:12s} {r['kernel'][:12]:12s} {r['mode']:5s}"
        if "ratio" in r:
            line = (f"{head} {us(r['a_us']):>9s} {us(r['b_us']):>9s} {r['ratio']:6.3f}  "
                    f"{us(r['a_range'][0])}-{us(r['a_range'][1])}, {us(r['b_range'][0])}-{us(r['b_range'][1])}")
        else:
            line = f"{head} {'':9s} {'':9s} {'':6s}"
        if r["status_a"] != r["status_b"]:
            line += f"  status A {r['status_a']}, {side} {r['status_b']}"
        lines.append(line)
    return "\n".join(lines)


class RunError(Exception):
    """A run that left no results file, or one that is not verifybench's."""


class Outcome(NamedTuple):
    worst: int  # the worst exit code of the runs (or 128 + a signal that stopped them)
    runs: dict  # {side: [records() of each round compared]}
    partial: bool  # True: no round was whole; runs hold the first round's shared records
    stopped_by: int  # the signal that stopped the runs, or 0


class SignalStop:
    """SIGINT and SIGTERM while runs go on: remembered, passed to the run under way, and the
    runs stop after it. Each run starts in its own process group, so that a signal to the
    whole group (Ctrl-C, `timeout`) reaches it once, from here: verifybench ends at once on a
    second one. A run whose parent dies is sent SIGTERM (Linux), so none outlives this script."""

    def __init__(self):
        self.signal, self.child, self.saved = 0, None, {}
        try:  # looked up here: the child between fork and exec should only call it
            import ctypes
            self.prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            self.prctl = None  # not Linux: a killed script may leave its run behind

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not signal.SIG_IGN:  # a background job's SIGINT stays ignored
                self.saved[sig] = signal.signal(sig, self.on_signal)
        return self

    def __exit__(self, *exc):
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)

    def on_signal(self, sig, frame):
        self.signal = self.signal or sig
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(sig)

    def own_group(self):
        """In the run's process, before exec: its own process group, and SIGTERM when the
        parent dies."""
        os.setpgid(0, 0)
        if self.prctl:
            self.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    def run(self, cmd, stdout):
        self.child = subprocess.Popen(cmd, stdout=stdout, preexec_fn=self.own_group)
        try:
            return self.child.wait()
        finally:
            self.child = None


def plain_run(cmd, stdout):
    return subprocess.run(cmd, stdout=stdout).returncode


def shared_round(first_round):
    """{side: records() of its first run, whole or not}, cut to the records every build has, as
    one round: what a comparison can use of runs that all stopped during round 1."""
    common = set.intersection(*(set(recs) for recs in first_round.values()))
    return {side: [{k: r for k, r in recs.items() if k in common}] for side, recs in first_round.items()}


def run_builds(bins, outdir, rounds, args, modes=("graph",), timing="hot", tag="ab_runs", first=1, labels=None,
               partial_ok=False, stop=None):
    """Runs the builds interleaved, rounds FIRST..ROUNDS, with ARGS; OUTDIR/a_1.json, b_1.json,
    ... (each run's stdout beside it as .txt); LABELS name the builds in the progress lines (A,
    B, ... unless given). STOP: a SignalStop that runs them (a signal ends the runs after the
    one under way). Returns an Outcome with the rounds every build finished; with PARTIAL_OK,
    when none is but every build ran part of round FIRST, that round's shared records. Raises
    RunError when a run wrote no results file or an unreadable one, or nothing is whole."""
    os.makedirs(outdir, exist_ok=True)
    binary_of = dict(zip(sides(len(bins)), bins))
    worst, runs, first_round = 0, {side: [] for side in binary_of}, {}
    for side, i in run_order(rounds, len(bins), first):
        label = labels[ord(side) - ord("a")] if labels else side.upper()
        if stop and stop.signal:
            print(f"{tag}: stopped by signal {stop.signal} before {label} round {i}", file=sys.stderr)
            break
        path = os.path.join(outdir, f"{side}_{i}.json")
        binary = binary_of[side]
        if os.path.exists(path):  # an earlier invocation's: never read it as this run's
            os.remove(path)
        print(f"{tag}: {label} round {i}: {binary}", file=sys.stderr, flush=True)
        start = time.monotonic()
        with open(os.path.join(outdir, f"{side}_{i}.txt"), "w") as out:  # the run's own table
            rc = (stop.run if stop else plain_run)([binary, *args, "--json", path], out)
        rc = 128 - rc if rc < 0 else rc  # killed by a signal: the shell's number for it
        print(f"{tag}: {label} round {i}: exit {rc} after {time.monotonic() - start:.1f} s", file=sys.stderr,
              flush=True)
        worst = max(worst, rc)
        if not os.path.exists(path):
            raise RunError(f"{binary} exited {rc} and wrote no {path}")
        try:
            d = results_file.load(path)
            recs = records(d, modes, timing)
        except (OSError, ValueError) as e:
            raise RunError(str(e)) from e
        except KeyError as e:
            raise RunError(f"{path}: {e}") from e
        if i == first:
            first_round[side] = recs
        why = results_file.incomplete(d)
        if why:
            # A checkpoint (killed) or a run stopped by a signal: its records are a part of
            # the scenarios, and so is its round. Keep the rounds every build finished.
            print(f"{tag}: {label} round {i} did not finish (exit {rc}; {path}: {why})", file=sys.stderr)
            break
        runs[side].append(recs)
    whole = min(len(v) for v in runs.values())
    signum = stop.signal if stop else 0
    worst = max(worst, 128 + signum if signum else 0)
    if whole:
        if whole < rounds - first + 1:
            print(f"{tag}: rounds {first}-{first + whole - 1} compared", file=sys.stderr)
        return Outcome(worst, {s: v[:whole] for s, v in runs.items()}, False, signum)
    if not partial_ok or len(first_round) < len(binary_of):
        raise RunError(f"no round finished in every build (exit {worst}), so there is nothing whole to compare")
    shared = shared_round(first_round)
    if not shared["a"][0]:
        raise RunError(f"no round finished in every build (exit {worst}), and no record of round {first} in all")
    print(f"{tag}: no round is whole: round {first}'s {len(shared['a'][0])} record(s) that every build finished "
          f"compared", file=sys.stderr)
    return Outcome(worst, shared, True, signum)


def die(msg):
    """Bad usage or a run that left nothing to compare: exit 2, never 1 (a failed check)."""
    print(msg, file=sys.stderr)
    sys.exit(2)


def main(argv):
    if "--" not in argv:
        die(USAGE)
    cut = argv.index("--")
    ap = argparse.ArgumentParser(prog="ab_runs.py", usage=USAGE)
    ap.add_argument("paths", nargs="+", help="the builds, then OUTDIR")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--mode", choices=("graph", "eager", "both"), default="graph")
    ap.add_argument("--timing", choices=("hot", "cold"), default="hot")
    opt = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    if len(opt.paths) < 3:
        die(USAGE)
    bins, outdir = opt.paths[:-1], opt.paths[-1]
    if len(bins) > MAX_BUILDS:
        die(f"ab_runs.py: at most {MAX_BUILDS} builds, got {len(bins)}")
    if opt.rounds < 1:
        die("ab_runs.py: --rounds must be at least 1")
    for b in bins:
        if not os.access(b, os.X_OK):
            die(f"ab_runs.py: {b}: not an executable")
    modes = ("graph", "eager") if opt.mode == "both" else (opt.mode,)
    binary_of = dict(zip(sides(len(bins)), bins))
    try:
        with SignalStop() as stop:
            worst, runs, partial, stopped_by = run_builds(bins, outdir, opt.rounds, args, modes, opt.timing,
                                                 partial_ok=True, stop=stop)
    except RunError as e:
        die(f"ab_runs.py: {e}")
    builds = []
    for side in list(binary_of)[1:]:
        rows = compare(runs["a"], runs[side])
        means = geomeans(rows)
        builds.append({"side": side, "bin": binary_of[side], "rows": rows,
                       "geomeans": [{"kernel": k, "mode": m, "ratio": g, "records": c}
                                    for (k, m), (g, c) in means.items()]})
        if len(bins) > 2:
            print(f"{side.upper()}: {binary_of[side]} against A: {bins[0]}")
        if partial:
            print("partial: no round finished in every build; the first round's shared records only")
        if opt.timing == "cold":
            print("cold medians (L2 flushed before each launch)")
        print(format_rows(rows, side.upper()))
        if means:
            print(format_geomeans(means, side.upper()))
    with open(os.path.join(outdir, "ab.json"), "w") as f:
        json.dump({"a": bins[0], "b": bins[1], "rounds": 0 if partial else len(runs["a"]), "partial": partial,
                   "stopped_by_signal": stopped_by,
                   "rounds_planned": opt.rounds, "timing": opt.timing, "args": args,
                   "rows": builds[0]["rows"],
                   "geomeans": builds[0]["geomeans"], "builds": builds}, f, indent=1)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
