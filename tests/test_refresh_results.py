#!/usr/bin/env python3
"""scripts/refresh_results.sh turns a proof run's output directory into the committed results
directory: the run's files copied in, the sanitizer summaries taken from logs.tgz and paths/,
the speedup tables written again, then the compare verdict against the results it replaced
(exit 1 on a regression), the headline table and the facts printed; a missing input is one line
and exit 2. Runs on the committed H200 results, so it needs no GPU.
usage: test_refresh_results.py VERIFYBENCH"""
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
script = os.path.join(root, "scripts", "refresh_results.sh")
committed = os.path.join(root, "results", "h200")
verifybench = os.path.abspath(sys.argv[1])


def scaled(results, kernel, factor):
    """A copy of a results file with one kernel's hot times scaled."""
    d = json.loads(json.dumps(results))
    for s in d["scenarios"]:
        for r in s.get("records", []):
            hot = ((r.get("timing") or {}).get("hot")) or {}
            if r["kernel"] == kernel and hot.get("median_us"):
                for k in ("median_us", "p10_us", "p90_us", "min_us", "max_us"):
                    if hot.get(k) is not None:
                        hot[k] *= factor
                hot["samples_us"] = [x * factor for x in hot.get("samples_us", [])]
    return d


def proof_dir(path, results, paths=True):
    """What gpu_proof.sh leaves behind: the results, the logs archive, and paths/ when run."""
    os.makedirs(path)
    with open(os.path.join(path, "results.json"), "w") as f:
        json.dump(results, f)
    for name, text in (("summary.md", "# summary\n"), ("proof.log", "== build\nproof status: 0\n")):
        with open(os.path.join(path, name), "w") as f:
            f.write(text)
    with tarfile.open(os.path.join(path, "logs.tgz"), "w:gz") as t:
        data = b"compute-sanitizer on the small scenarios: 0 hazards\n"
        info = tarfile.TarInfo("./sanitize-summary.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    if paths:
        os.makedirs(os.path.join(path, "paths"))
        with open(os.path.join(path, "paths", "sanitize-summary.txt"), "w") as f:
            f.write("compute-sanitizer on sanitize_paths.json: 0 hazards\n")


def results_dir(path, old):
    os.makedirs(path)
    for name in os.listdir(committed):
        if name.startswith("triton_") and name.endswith(".json"):
            shutil.copy(os.path.join(committed, name), path)
    with open(os.path.join(path, "results.json"), "w") as f:
        json.dump(old, f)


def run(src, dst):
    env = dict(os.environ, BIN=verifybench)
    return subprocess.run(["sh", script, src, dst], capture_output=True, text=True, env=env, cwd=root)


with open(os.path.join(committed, "results.json")) as f:
    base = json.load(f)

with tempfile.TemporaryDirectory() as d:
    # the new run 20% faster for mla_onepass: no regression, the tables and facts printed
    src, dst = os.path.join(d, "out"), os.path.join(d, "res")
    proof_dir(src, base)
    results_dir(dst, scaled(base, "mla_onepass", 1.2))
    p = run(src, dst)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    with open(os.path.join(dst, "results.json")) as f:
        assert json.load(f) == base
    with open(os.path.join(dst, "sanitize.txt")) as f:
        assert "small scenarios: 0 hazards" in f.read()
    with open(os.path.join(dst, "sanitize-paths.txt")) as f:
        assert "sanitize_paths.json: 0 hazards" in f.read()
    with open(os.path.join(dst, "speedup.md")) as f:
        md = f.read()
    assert "SGLang 0.5.23" in md and "| **geomean** | mla_onepass |" in md, md[:500]
    assert os.path.getsize(os.path.join(dst, "speedup.csv")) > 0
    out = p.stdout
    assert "FASTER" in out and "mla_onepass" in out and "SLOWER" not in out, out[:3000]
    assert "== headline table" in out and "| bs 8 × 91k |" in out, out[-3000:]
    assert "records: 524: 524 pass" in out and "read +0.0% against the old run's" in out, out[-3000:]

    # the new run 20% slower for mla_wgmma: the compare's regression is the exit status
    src2, dst2 = os.path.join(d, "out2"), os.path.join(d, "res2")
    proof_dir(src2, scaled(base, "mla_wgmma", 1.2), paths=False)
    results_dir(dst2, base)
    with open(os.path.join(dst2, "sanitize-paths.txt"), "w") as f:
        f.write("an earlier run's\n")
    p = run(src2, dst2)
    assert p.returncode == 1 and "SLOWER" in p.stdout, p.stdout[-2000:] + p.stderr
    assert "the paths stage did not run" in p.stderr, p.stderr
    with open(os.path.join(dst2, "sanitize-paths.txt")) as f:
        assert f.read() == "an earlier run's\n"  # left as it was, not emptied

    # an interrupted run: refused before anything is copied
    cut = json.loads(json.dumps(base))
    cut["complete"], cut["interrupted_by"] = False, "SIGINT"
    with open(os.path.join(src2, "results.json"), "w") as f:
        json.dump(cut, f)
    with open(os.path.join(dst2, "results.json")) as f:
        before = f.read()
    p = run(src2, dst2)
    assert p.returncode == 2 and "complete: false (interrupted by SIGINT)" in p.stderr, p.stderr
    with open(os.path.join(dst2, "results.json")) as f:
        assert f.read() == before

    # a proof directory without the configs stage's files: one line, exit 2
    os.remove(os.path.join(src2, "results.json"))
    p = run(src2, dst2)
    assert p.returncode == 2 and "results.json: missing" in p.stderr, p.stderr
print("refresh_results: files copied in, tables written, verdict, headline table and facts printed; "
      "a regression exits 1, a missing input or an interrupted run 2")
