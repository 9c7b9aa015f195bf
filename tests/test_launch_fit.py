#!/usr/bin/env python3
"""scripts/launch_fit.py splits each launch into streaming and the rest: on a synthetic run whose
times are a fixed cost plus bytes at a known rate it must recover both, take only the kernel's
passing records of the asked mode and variant, and refuse a foreign file or a pair that cannot
set a rate. Needs no GPU."""
import json
import os
import subprocess
import sys
import tempfile

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "launch_fit.py")

GBPS, FIXED_US = 2000.0, 20.0  # the synthetic kernel: 20 µs a launch, then 2000 GB/s


def us_of(nbytes, fixed=FIXED_US):
    return fixed + nbytes * 1e-3 / GBPS


def rec(kernel, us, mode="graph", variant="base", status="pass"):
    return {"kernel": kernel, "mode": mode, "variant": variant, "status": status,
            "timing": {"hot": {"samples": 10, "median_us": us}, "cold": {"samples": 10, "median_us": us + 3}}}


def scenario(name, nbytes, records):
    return {"name": name, "bytes": nbytes, "records": records}


def results(scenarios, complete=True):
    return {"schema": "verifybench.results/1", "complete": complete, "gpu": {"name": "GPU"},
            "ceilings": {"read_gbps": 2500.0}, "scenarios": scenarios}


SCEN = [
    scenario("short", 10**6, [rec("k", us_of(10**6)), rec("other", 9.0)]),
    # a failed record and an eager one of the same kernel: neither may set the rate
    scenario("mid", 5 * 10**7, [rec("k", us_of(5 * 10**7) + 7.0), rec("k", 1.0, status="fail"),
                                rec("k", 2.0, mode="eager"), rec("other", 30.0)]),
    scenario("long", 4 * 10**8, [rec("k", us_of(4 * 10**8)), rec("other", 250.0)]),
    scenario("longest", 10**9, [rec("k", us_of(10**9)), rec("other", 600.0)]),
]


def run(data, *args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "results.json")
        with open(path, "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))
        return subprocess.run([sys.executable, script, path, *args], capture_output=True, text=True)


def main():
    # The rate and the rest come back from the model that made the times.
    r = run(results(SCEN), "-k", "k", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["kernels"]["k"]
    assert abs(out["streaming_gbps"] - GBPS) < 1e-6 * GBPS, out["streaming_gbps"]
    assert out["pair"] == ["long", "longest"], out["pair"]
    rows = {x["scenario"]: x for x in out["records"]}
    assert sorted(rows) == ["long", "longest", "mid", "short"], sorted(rows)
    assert abs(rows["short"]["rest_us"] - FIXED_US) < 1e-6, rows["short"]
    assert abs(rows["mid"]["rest_us"] - FIXED_US - 7.0) < 1e-6, rows["mid"]  # its extra 7 µs is rest
    assert abs(rows["mid"]["rest_share"] - rows["mid"]["rest_us"] / rows["mid"]["median_us"]) < 1e-12

    # Markdown names the pair and the share of the read ceiling; every kernel by default.
    r = run(results(SCEN))
    assert r.returncode == 0, r.stderr
    assert "## k (graph, hot medians)" in r.stdout and "## other" in r.stdout, r.stdout
    assert "Streams at 2000 GB/s between `long` and `longest`, 80% of the read ceiling" in r.stdout, r.stdout

    # --pair sets the rate from the two named records: short and mid hold mid's extra 7 µs.
    r = run(results(SCEN), "-k", "k", "--pair", "short", "mid", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["kernels"]["k"]["streaming_gbps"]
    want = 1e-3 * (5 * 10**7 - 10**6) / (us_of(5 * 10**7) + 7.0 - us_of(10**6))
    assert abs(got - want) < 1e-6 * want, (got, want)

    # Cold medians are another column of the same records.
    r = run(results(SCEN), "-k", "k", "--timing", "cold", "--json")
    cold = {x["scenario"]: x for x in json.loads(r.stdout)["kernels"]["k"]["records"]}
    assert abs(cold["short"]["rest_us"] - FIXED_US - 3.0) < 1e-6, cold["short"]

    # Refusals: one line, exit 2.
    for data, args, why in [
        ("{}", [], "not a verifybench.results/1 file"),
        (results(SCEN), ["-k", "nope"], "kernel nope: fewer than two timed graph records of variant base (kernels that have them: k, other)"),
        (results(SCEN), ["-k", "k", "--pair", "short", "gone"], "no timed record of scenario 'gone'"),
        (results([scenario("a", 10**8, [rec("k", 100.0)]), scenario("b", 12 * 10**7, [rec("k", 110.0)])]), [],
         "too close to set a rate"),
        (results([scenario("a", 10**8, [rec("k", 100.0)]), scenario("b", 10**9, [rec("k", 90.0)])]), [],
         "is not slower"),
    ]:
        r = run(data, *args)
        assert r.returncode == 2 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, (why, r.stderr)

    # A run that did not finish is fitted but said to be partial.
    r = run(results(SCEN, complete=False), "-k", "k")
    assert r.returncode == 0 and "checkpoint of an unfinished run" in r.stderr, r.stderr
    print("launch_fit: ok")


if __name__ == "__main__":
    main()
