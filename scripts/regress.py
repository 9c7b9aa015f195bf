#!/usr/bin/env python3
"""One command from a change to a verdict: did it make any kernel slower, break a check or
change a token?

    scripts/regress.py [BASE] [options] [-- VERIFYBENCH_ARGS...]

BASE (a git revision, default HEAD) is built from `git archive` into OUT/base-<commit>/ with
the new build's meson options (gpu_archs, buildtype) and VB_COMMIT naming it; a base already
built there is reused, since a commit's tree never changes (--base-src DIR builds a tree
unpacked elsewhere instead, for a copy of the repository without git history; --base-bin takes
a build as it is). The new side is the build
directory (default build/, brought up to date with ninja first), so the usual loop is: edit a
kernel, run this, read the verdict against HEAD. For a branch: `scripts/regress.py main`.

Both builds then run the same scenarios interleaved (base, new, base, new: ROUNDS each, as
scripts/ab_runs.py does, so clocks and temperature drift hit both), and `verifybench compare`
judges each round's pair: a timing change counts when it exceeds the threshold and both runs'
measured noise. Across rounds a record is
  BROKEN or TOKENS   when any round says so (a check that fails once is a failure),
  SLOWER or FASTER   only when every round says so (a slowdown must reproduce),
  fixed              when a round says so and none broke,
  same               otherwise (a change seen in some rounds only is listed as "mixed").
Without a GPU the runs have no timings, so one round is run and the verdict covers the
statuses and token verdicts of the CPU checks.

Exit status: 0 no regression; 1 a record SLOWER, BROKEN or TOKENS; 2 bad usage, a failed
build, or a run that gave no verdict (bad input, --require-gpu without a GPU, a run stopped by
a signal); 130 on Ctrl-C (the runs so far stay in OUT/runs/).
Writes OUT/runs/ (each run's results and table), OUT/regress.json (schema
verifybench.regress/1) and, with --markdown FILE, a table for a pull request.
"""
import argparse
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ab_runs  # noqa: E402  (the interleaved runs, shared)
import results_file  # noqa: E402  (the schema check, shared)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USAGE = ("scripts/regress.py [BASE] [--build DIR | --new-bin BIN] [--base-bin BIN | --base-src DIR] [--rounds N] "
         "[--threshold PCT] [--gpu-archs A,B] [--out DIR] [--markdown FILE] [--all] [-- VERIFYBENCH_ARGS...]")
REGRESSIONS = ("SLOWER", "BROKEN", "TOKENS")
ORDER = ("BROKEN", "TOKENS", "SLOWER", "fixed", "FASTER", "old only", "new only", "same", "untimed")


class Failure(Exception):
    """Why there is no verdict: printed as one line, exit 2."""


def say(msg):
    print(f"regress: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    """Runs a build step whose failure ends the job; its output is shown only then (the end of
    it: a compiler's error is there)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode != 0:
        sys.stderr.write("\n".join(p.stdout.splitlines()[-40:]) + "\n")
        raise Failure(f"{' '.join(cmd)} exited {p.returncode}")
    return p


def commit_of(rev):
    p = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "--quiet", rev + "^{commit}"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise Failure(f"{rev}: not a commit of {REPO}'s git repository")
    return p.stdout.strip()


def build_options(build_dir):
    """The meson options of an existing build that the base must share: -Dname=value."""
    p = subprocess.run(["meson", "introspect", build_dir, "--buildoptions"], capture_output=True, text=True)
    if p.returncode != 0:
        raise Failure(f"{build_dir}: not a meson build directory ({p.stderr.strip() or 'meson introspect failed'})")
    opts = {o["name"]: o["value"] for o in json.loads(p.stdout)}
    out = []
    for name in ("buildtype", "gpu_archs", "wgmma_fence_copies"):
        if name in opts:
            v = opts[name]
            v = ",".join(v) if isinstance(v, list) else str(v).lower() if isinstance(v, bool) else str(v)
            out.append(f"-D{name}={v}")
    return out


def declared(src, option):
    """Whether the base tree knows a -Dname=value option: a builtin one, or one its
    meson_options.txt declares (an older commit may predate an option of the new build's)."""
    name = option[2:].split("=", 1)[0]
    if name in ("buildtype",):
        return True
    path = os.path.join(src, "meson_options.txt")
    return os.path.exists(path) and re.search(rf"option\(\s*'{re.escape(name)}'", open(path).read()) is not None


def unpack(commit, src):
    """COMMIT's tree into SRC, from git archive."""
    os.makedirs(src)
    archive = subprocess.Popen(["git", "-C", REPO, "archive", "--format=tar", commit], stdout=subprocess.PIPE)
    untar = subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout)
    archive.stdout.close()
    if archive.wait() != 0 or untar.returncode != 0:
        raise Failure(f"could not unpack {commit[:12]}'s tree into {src}")


def build_base(name, home, options, src=None):
    """verifybench built under HOME from the source tree SRC (default: NAME, a commit, unpacked
    into HOME/src), or the one built there before from the same tree and options. NAME is what
    the binary says it was built from (VB_COMMIT)."""
    binary = os.path.join(home, "build", "verifybench")
    stamp = os.path.join(home, "built-with")
    want = "\n".join([name, src or "git archive", *options]) + "\n"
    if os.access(binary, os.X_OK) and os.path.exists(stamp) and open(stamp).read() == want:
        say(f"base {name}: reusing {binary}")
        return binary
    shutil.rmtree(home, ignore_errors=True)
    say(f"base {name}: building in {home} ({' '.join(options) or 'default options'})")
    if src is None:
        src = os.path.join(home, "src")
        unpack(name, src)
    else:
        os.makedirs(home)
    env = dict(os.environ, VB_COMMIT=name)  # the tree has no git metadata of its own to describe
    options = [o for o in options if declared(src, o)]
    run(["meson", "setup", os.path.join(home, "build"), src, *options], env=env)
    run(["ninja", "-C", os.path.join(home, "build"), "verifybench"], env=env)
    with open(stamp, "w") as f:
        f.write(want)
    return binary


def compare_round(new_bin, a_json, b_json, threshold):
    """verifybench compare of one round's pair, as its JSON document."""
    p = subprocess.run([new_bin, "compare", a_json, b_json, "--format", "json", "--threshold", str(threshold)],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise Failure(f"compare {a_json} {b_json}: {p.stderr.strip() or f'exited {p.returncode}'}")
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        raise Failure(f"compare {a_json} {b_json}: not JSON ({e})") from e


def key(row):
    return (row["scenario"], row["variant"], row["kernel"], row["mode"])


def judge(verdicts):
    """One record's verdict over its rounds' verdicts (compare's names; None where a round
    lacked the record)."""
    seen = set(verdicts)
    for v in ("BROKEN", "TOKENS"):
        if v in seen:
            return v
    for v in ("SLOWER", "FASTER"):
        if seen == {v}:
            return v
    if "fixed" in seen:
        return "fixed"
    if len(seen) == 1 and None not in seen:
        return verdicts[0]
    return "same"


def aggregate(rounds):
    """Rows of the final verdict from each round's compare document: the record, its verdict,
    each round's verdict, and the base's and the new build's median over rounds of their hot
    medians with B / A."""
    by_round = [{key(r): r for r in doc["records"]} for doc in rounds]
    keys = {}
    for doc in rounds:
        for r in doc["records"]:
            keys.setdefault(key(r), []).append(r)
    rows = []
    for k, per_round in keys.items():
        verdicts = [records[k]["verdict"] if k in records else None for records in by_round]
        row = {"scenario": k[0], "variant": k[1], "kernel": k[2], "mode": k[3], "verdict": judge(verdicts),
               "rounds": verdicts, "old_status": per_round[-1]["old_status"],
               "new_status": per_round[-1]["new_status"]}
        a = [r["old_median_us"] for r in per_round if r["old_median_us"] is not None]
        b = [r["new_median_us"] for r in per_round if r["new_median_us"] is not None]
        if a and b:
            row.update(a_us=statistics.median(a), b_us=statistics.median(b))
            row["ratio"] = row["b_us"] / row["a_us"]
            row.update(a_range=[min(a), max(a)], b_range=[min(b), max(b)])
        row["mixed"] = row["verdict"] == "same" and any(v not in ("same", "untimed", None) for v in verdicts)
        rows.append(row)
    rows.sort(key=lambda r: (ORDER.index(r["verdict"]) if r["verdict"] in ORDER else len(ORDER), key(r)))
    return rows


def counts(rows):
    c = {}
    for r in rows:
        c[r["verdict"]] = c.get(r["verdict"], 0) + 1
    return {v: c[v] for v in ORDER if v in c}


def listed(rows, everything):
    """The rows a reader needs: every change and every mixed record, or all with --all."""
    return [r for r in rows if everything or r["verdict"] not in ("same", "untimed") or r["mixed"]]


def cell_time(r):
    return (ab_runs.us(r["a_us"]), ab_runs.us(r["b_us"]), f"{r['ratio']:.3f}") if "ratio" in r else ("-", "-", "-")


def rounds_text(r):
    return ",".join(v or "absent" for v in r["rounds"])


def table(rows):
    w = max([len("scenario")] + [len(r["scenario"]) for r in rows])
    lines = [f"{'scenario':{w}s} {'variant':12s} {'kernel':12s} {'mode':5s} {'verdict':9s} {'base us':>9s} "
             f"{'new us':>9s} {'new/base':>8s}  rounds"]
    for r in rows:
        a, b, ratio = cell_time(r)
        status = "" if r["old_status"] == r["new_status"] else f"  status {r['old_status']} -> {r['new_status']}"
        lines.append(f"{r['scenario']:{w}s} {r['variant'][:12]:12s} {r['kernel'][:12]:12s} {r['mode']:5s} "
                     f"{r['verdict'] + ('*' if r['mixed'] else ''):9s} {a:>9s} {b:>9s} {ratio:>8s}  "
                     f"{rounds_text(r)}{status}")
    return "\n".join(lines)


def markdown(doc):
    out = ["### verifybench regress", "",
           f"- base: {doc['base']['commit']} ({doc['base']['bin']})",
           f"- new: {doc['new']['commit']} ({doc['new']['bin']})",
           f"- GPU: {doc['gpu'] or 'none (statuses and token verdicts only)'}; {doc['rounds']} round(s), "
           f"threshold {doc['threshold']:g}% and both runs' noise",
           f"- verdict: **{doc['verdict']}** ({', '.join(f'{n} {v}' for v, n in doc['counts'].items())})", ""]
    rows = listed(doc["records"], doc["all"])
    if rows:
        out += ["| scenario | variant | kernel | mode | verdict | base µs | new µs | new / base | rounds |",
                "|---|---|---|---|---|---:|---:|---:|---|"]
        for r in rows:
            a, b, ratio = cell_time(r)
            out.append(f"| {r['scenario']} | {r['variant']} | {r['kernel']} | {r['mode']} | "
                       f"{r['verdict'] + (' (mixed)' if r['mixed'] else '')} | {a} | {b} | {ratio} | {rounds_text(r)} |")
        out.append("")
    if doc["geomeans"]:
        out += ["| kernel | mode | geomean new / base | records |", "|---|---|---:|---:|"]
        out += [f"| {g['kernel']} | {g['mode']} | {g['ratio']:.3f} | {g['records']} |" for g in doc["geomeans"]]
    return "\n".join(out) + "\n"


def default_args():
    return sorted(glob.glob(os.path.join(REPO, "configs", "*.json"))) + ["-q"]


def parse(argv):
    cut = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(prog="regress.py", usage=USAGE, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", nargs="?", default="HEAD", help="git revision to compare against (default HEAD)")
    ap.add_argument("--build", metavar="DIR", default=os.path.join(REPO, "build"),
                    help="the new side's meson build directory, rebuilt first (default build/)")
    ap.add_argument("--new-bin", metavar="BIN", help="the new side's verifybench, used as it is (no build)")
    ap.add_argument("--base-bin", metavar="BIN", help="the base's verifybench, used as it is (BASE is then only its name)")
    ap.add_argument("--base-src", metavar="DIR",
                    help="the base's source tree, built here (BASE is then only its name): for a machine whose "
                         "copy of the repository has no git history, given a tree unpacked from git archive")
    ap.add_argument("--rounds", type=int, metavar="N", default=2, help="runs of each build, interleaved (default 2)")
    ap.add_argument("--threshold", type=float, metavar="PCT", default=5.0, help="percent a timing change must exceed (default 5)")
    ap.add_argument("--gpu-archs", metavar="A,B", help="the base's gpu_archs (default: the new build's)")
    ap.add_argument("--out", metavar="DIR", help="where the base builds and the runs go (default BUILD/regress)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the verdict as markdown to this file")
    ap.add_argument("--all", action="store_true", help="list every record, not only the changed ones")
    opt = ap.parse_args(argv[:cut])
    opt.args = argv[cut + 1:] or default_args()
    if opt.rounds < 1:
        ap.error("--rounds must be at least 1")
    if opt.threshold < 0:
        ap.error("--threshold must not be negative")
    if opt.base_bin and opt.base_src:
        ap.error("--base-bin and --base-src both name the base: give one")
    if "--json" in opt.args:
        ap.error("the runs' --json files are regress's own (OUT/runs/); leave --json out of VERIFYBENCH_ARGS")
    if opt.markdown and not os.path.isdir(os.path.dirname(os.path.abspath(opt.markdown))):
        ap.error(f"--markdown {opt.markdown}: no such directory (said now, not after the runs)")
    return opt


def prepare(opt):
    """(base binary, base commit name, new binary, new commit name), building what is needed."""
    out = opt.out = opt.out or os.path.join(opt.build, "regress")
    if opt.new_bin:
        new_bin = opt.new_bin
    else:
        if not os.path.isfile(os.path.join(opt.build, "build.ninja")):
            raise Failure(f"{opt.build}: not a meson build directory: run scripts/bootstrap.sh first, "
                          "or name one with --build DIR (or a binary with --new-bin BIN)")
        say(f"new: bringing {opt.build} up to date")
        run(["ninja", "-C", opt.build, "verifybench"])
        new_bin = os.path.join(opt.build, "verifybench")
    for b in filter(None, (new_bin, opt.base_bin)):
        if not os.access(b, os.X_OK):
            raise Failure(f"{b}: not an executable")
    if opt.base_bin:
        return opt.base_bin, opt.base, new_bin, version_of(new_bin)
    options = build_options(opt.build) if not opt.new_bin else []
    if opt.gpu_archs:
        options = [o for o in options if not o.startswith("-Dgpu_archs=")] + [f"-Dgpu_archs={opt.gpu_archs}"]
    if opt.base_src:
        src = os.path.abspath(opt.base_src)
        if not os.path.isfile(os.path.join(src, "meson.build")):
            raise Failure(f"{opt.base_src}: not a verifybench source tree (no meson.build)")
        name = re.sub(r"[^A-Za-z0-9._-]", "_", opt.base)
        base_bin, base_name = build_base(name, os.path.join(out, f"base-src-{name}"), options, src), name
    else:
        commit = commit_of(opt.base)[:12]
        base_bin, base_name = build_base(commit, os.path.join(out, f"base-{commit}"), options), commit
    return base_bin, base_name, new_bin, version_of(new_bin)


def version_of(binary):
    """The commit a verifybench says it was built from ("verifybench 0.1.0 (commit X)")."""
    p = subprocess.run([binary, "--version"], capture_output=True, text=True)
    m = re.search(r"\(commit ([^)]+)\)", p.stdout)
    return m.group(1) if p.returncode == 0 and m else "unknown"


def timed(path):
    d = results_file.load(path)
    return any((r.get("timing") or {}).get("hot", {}).get("samples") for s in d["scenarios"] for r in s["records"])


def gpu_of(path):
    g = results_file.load(path).get("gpu") or {}
    return g.get("name") if g.get("present") else None


def regress(opt):
    base_bin, base_name, new_bin, new_name = prepare(opt)
    runs = os.path.join(opt.out, "runs")
    say(f"base {base_name} against new {new_name}: {opt.rounds} round(s) interleaved, {len(opt.args)} argument(s)")
    worst = ab_runs.run_builds([base_bin, new_bin], runs, 1, opt.args, ("graph", "eager"), tag="regress",
                               labels=("base", "new")).worst
    if not timed(os.path.join(runs, "a_1.json")) and opt.rounds > 1:
        say("no timings in the first round (no GPU): one round decides statuses and token verdicts")
        opt.rounds = 1
    if opt.rounds > 1:
        rest = ab_runs.run_builds([base_bin, new_bin], runs, opt.rounds, opt.args, ("graph", "eager"),
                                  tag="regress", first=2, labels=("base", "new"))
        worst = max(worst, rest.worst)
    if worst not in (0, 1, 4):  # 1: a check failed, 4: a CUDA error; both still leave records
        raise Failure(f"a run exited {worst}: no verdict (the runs' tables are in {runs}/)")
    docs = [compare_round(new_bin, os.path.join(runs, f"a_{i}.json"), os.path.join(runs, f"b_{i}.json"),
                          opt.threshold) for i in range(1, opt.rounds + 1)]
    rows = aggregate(docs)
    c = counts(rows)
    n_reg = sum(c.get(v, 0) for v in REGRESSIONS)
    return {"schema": "verifybench.regress/1", "base": {"commit": base_name, "bin": base_bin},
            "new": {"commit": new_name, "bin": new_bin}, "gpu": gpu_of(os.path.join(runs, "b_1.json")),
            "rounds": opt.rounds, "threshold": opt.threshold, "args": opt.args, "all": opt.all,
            "verdict": f"{n_reg} regression{'s' if n_reg > 1 else ''}" if n_reg else "no regression",
            "regressions": n_reg, "counts": c,
            "geomeans": [{"kernel": k, "mode": m, "ratio": g, "records": n}
                         for (k, m), (g, n) in ab_runs.geomeans(rows).items()],
            "records": rows}


def main(argv):
    opt = parse(argv)
    try:
        doc = regress(opt)
    except (Failure, ab_runs.RunError) as e:
        print(f"regress.py: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"regress.py: interrupted; the runs so far are in {opt.out}/runs/", file=sys.stderr)
        return 130
    except Exception:  # a bug here must not read as exit 1, "a regression"
        traceback.print_exc()
        return 2
    try:
        with open(os.path.join(opt.out, "regress.json"), "w") as f:
            json.dump(doc, f, indent=1)
        if opt.markdown:
            with open(opt.markdown, "w") as f:
                f.write(markdown(doc))
    except OSError as e:  # the verdict still goes to stdout below; the exit says a file is missing
        print(f"regress.py: {e}", file=sys.stderr)
        doc["write_failed"] = True
    rows = listed(doc["records"], opt.all)
    print(f"base {doc['base']['commit']} ({doc['base']['bin']}), new {doc['new']['commit']} ({doc['new']['bin']})")
    print(f"GPU: {doc['gpu'] or 'none: statuses and token verdicts only'}; {doc['rounds']} round(s); a timing change "
          f"counts above {opt.threshold:g}% and both runs' noise, in every round")
    if rows:
        print(table(rows))
        if any(r["mixed"] for r in rows):
            print("* mixed: a change some rounds saw and others did not, counted as same")
    if doc["geomeans"]:
        print(ab_runs.format_geomeans({(g["kernel"], g["mode"]): (g["ratio"], g["records"]) for g in doc["geomeans"]},
                                      "new").replace(" / A", " / base"))
    print(f"verdict: {doc['verdict']} ({', '.join(f'{n} {v}' for v, n in doc['counts'].items())}); "
          f"{os.path.join(opt.out, 'regress.json')}")
    return 1 if doc["regressions"] else 2 if doc.get("write_failed") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
