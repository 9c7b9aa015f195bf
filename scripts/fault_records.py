#!/usr/bin/env python3
"""Whether the runs of gpu_proof.sh's `faults` stage reported their test-only kernels' failures
as they must, and kept every other record.

    scripts/fault_records.py faults ADDRESS.json LAUNCH.json REGISTERS.json
    scripts/fault_records.py hang HANG.json

faults: the three results files of
  ADDRESS    -k mla_onepass -k fault_address -k naive_gpu: fault_address an ERROR naming the
             illegal address; mla_onepass, which ran before it, passed; that sticky error ended
             the GPU stages, so the records after it are skipped with that reason, and nothing
             else failed;
  LAUNCH     -k fail_launch -k naive_gpu: fail_launch an ERROR (an invalid launch configuration),
             and naive_gpu still passed: the error was not sticky;
  REGISTERS  -k out_of_registers -k naive_gpu: out_of_registers a graph FAIL naming
             OutOfResources (refused at capture or when instantiated), and naive_gpu passed in
             both modes: the refused launch's error was not left for the next kernel's.
hang: the results file of tests/data/tiny.json -k naive_gpu -k hang --gpu-timeout 10: the run
  marked incomplete and interrupted by the GPU timeout, hang an ERROR that timed out,
  naive_gpu passed, and the scenario under way listing hang's graph replay that never ran.

Prints one line saying what held, or each property that did not. Exit 0 when all held, 1 when
one did not, 2 on a file that cannot be read as a results file.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_file  # noqa: E402  (the schema check, shared)


def records(doc):
    """(scenario, variant, kernel, mode, status, message) of every record."""
    return [(s["name"], r["variant"], r["kernel"], r["mode"], r["status"], r["message"])
            for s in doc["scenarios"] for r in s.get("records", [])]


def of(recs, kernel, mode=None):
    return [r for r in recs if r[2] == kernel and (mode is None or r[3] == mode)]


def faults_problems(address, launch, registers):
    """What did not hold in the three fault runs: [] when everything did."""
    problems = []
    fa, fl, fr = records(address), records(launch), records(registers)

    def need(ok, what):
        if not ok:
            problems.append(what)

    need(any(r[4] == "ERROR" and "IllegalAddress" in r[5] for r in of(fa, "fault_address")),
         "fault_address: no ERROR naming cudaErrorIllegalAddress")
    need(any(r[4] == "pass" for r in of(fa, "mla_onepass")), "fault_address run: mla_onepass did not pass")
    need(all(r[4] in ("pass", "ERROR", "skipped") for r in fa), "fault_address run: a record failed or is unsupported")
    need(any(r[4] == "skipped" and "CUDA error ended the GPU stages" in r[5] for r in fa),
         "fault_address run: no record skipped because the CUDA error ended the GPU stages")
    need(any(r[4] == "ERROR" and ("InvalidConfiguration" in r[5] or "InvalidValue" in r[5])
             for r in of(fl, "fail_launch")), "fail_launch: no ERROR naming an invalid launch")
    need(any(r[4] == "pass" for r in of(fl, "naive_gpu")), "fail_launch run: naive_gpu did not pass (a sticky error?)")
    need(any(r[4] == "FAIL" and "OutOfResources" in r[5] for r in of(fr, "out_of_registers", "graph")),
         "out_of_registers: no graph FAIL naming OutOfResources")
    naive = of(fr, "naive_gpu")
    need({r[3] for r in naive} == {"eager", "graph"} and all(r[4] == "pass" for r in naive),
         "out_of_registers run: naive_gpu did not pass in both modes (an error left pending?)")
    return problems


NOT_RUN = "not run: the GPU stopped answering (--gpu-timeout)"


def hang_problems(doc):
    """What did not hold in the hang run: [] when everything did."""
    problems = []
    recs = records(doc)
    if doc.get("complete") is not False or doc.get("interrupted_by") != "GPU timeout":
        problems.append(f"hang run: complete {doc.get('complete')!r}, interrupted_by {doc.get('interrupted_by')!r};"
                        " expected false and 'GPU timeout'")
    if not any(r[4] == "ERROR" and r[5].startswith("timed out") for r in of(recs, "hang")):
        problems.append("hang: no ERROR that timed out")
    if not any(r[4] == "pass" for r in of(recs, "naive_gpu")):
        problems.append("hang run: naive_gpu did not pass")
    # tests/data/tiny.json's first scenario, under way when hang stopped, has the replay two-reqs
    first = [(r[2], r[3], r[1], r[5]) for r in records({"scenarios": doc["scenarios"][:1]})]
    if ("hang", "graph", "two-reqs", NOT_RUN) not in first:
        problems.append("hang run: the scenario under way does not list hang's graph replay two-reqs as not run")
    return problems


def main(argv):
    if not ((len(argv) == 4 and argv[0] == "faults") or (len(argv) == 2 and argv[0] == "hang")):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    docs = []
    for path in argv[1:]:
        try:
            docs.append(results_file.load(path))
        except (OSError, ValueError) as e:
            print(f"fault_records: {path}: not a readable results file ({e})", file=sys.stderr)
            return 2
    if argv[0] == "faults":
        problems = faults_problems(*docs)
        summary = f"fault records as expected: {' '.join(str(len(records(d))) for d in docs)} records"
    else:
        problems = hang_problems(docs[0])
        summary = f"hang reported as expected: {len(records(docs[0]))} records"
    for p in problems:
        print(f"NOT AS EXPECTED: {p}")
    if not problems:
        print(summary)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
