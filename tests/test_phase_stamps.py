#!/usr/bin/env python3
"""scripts/phase_stamps.py reads a phase-stamps build's PH and CB lines: on synthetic lines whose
phases are known it must group them into their launches, recover every phase's median, count a
CTA's pieces beyond the three stamped, ignore other output, and refuse a file without PH lines.
Needs no GPU."""
import json
import os
import subprocess
import sys
import tempfile

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "phase_stamps.py")

# The synthetic launch (µs after its start): the schedule 2, q copy 7, tile loop 90, writing 4.5;
# a CTA with two pieces runs the second right after the first.
SCHED, QCOPY, LOOP, WRITE = 2.0, 7.0, 90.0, 4.5
LAUNCH_GAP_US, COMBINE_AFTER_US, COMBINE_US = 400.0, 3.0, 6.0


def ns(us):
    return int(round(us * 1000))


def piece(start_us):
    """One piece's four stamps (ns) from its start, and its end (µs)."""
    q = start_us + QCOPY
    loop_end = q + LOOP
    written = loop_end + WRITE
    return [ns(start_us), ns(q), ns(loop_end), ns(written)], written


def ph_line(cta, t0_us, pieces_walked, stamped):
    """A PH line whose CTA walked pieces_walked pieces, the first `stamped` (up to 3) stamped."""
    parts, t = [], t0_us + SCHED
    for _ in range(min(stamped, 3)):
        p, t = piece(t)
        parts.append(p)
    while len(parts) < 3:
        parts.append([0, 0, 0, 0])
    body = " ".join(f"p{i} " + " ".join(str(x) for x in p) for i, p in enumerate(parts))
    return f"PH cta {cta} pieces {pieces_walked} t0 {ns(t0_us)} {body} end {ns(t + 0.5)}", t + 0.5


def launch_lines(start_us):
    lines, ends = [], []
    for cta in (0, 11, 22):
        line, end = ph_line(cta, start_us + 0.1 * cta / 11, 1, 1)
        lines.append(line)
        ends.append(end)
    # five pieces walked, three stamped: ends after three
    line, end = ph_line(33, start_us, 5, 5)
    lines.append(line)
    ends.append(end)
    entry = max(ends) + COMBINE_AFTER_US
    lines.append(f"CB block 0 entry {ns(entry)} waited {ns(entry + 0.2)} end {ns(entry + COMBINE_US)}")
    lines.append(f"CB block 37 entry {ns(entry + 0.1)} waited {ns(entry + 0.3)} end {ns(entry + COMBINE_US - 1)}")
    return lines, max(ends) - min(ends)


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        a, spread = launch_lines(1000.0)
        b, _ = launch_lines(1000.0 + LAUNCH_GAP_US)
        path = os.path.join(d, "stamps.txt")
        with open(path, "w") as f:
            # the harness's own output around the lines is ignored
            f.write("verifybench 0.1.0\n" + "\n".join(a) + "\nscenario table row\n" + "\n".join(b) + "\n")

        r = run(path, "--json")
        check(r.returncode == 0, f"--json exit {r.returncode}: {r.stderr}")
        out = json.loads(r.stdout)[0] if r.returncode == 0 else {}
        check(out.get("launches") == 2, f"launches {out.get('launches')}, want 2")
        check(out.get("ctas") == 8 and out.get("combine_blocks") == 4, f"counts {out.get('ctas')}, {out.get('combine_blocks')}")
        ph = out.get("phases", {})

        def med(k):
            return (ph.get(k) or {}).get("median_us")

        for k, want in (("start → piece", SCHED), ("q copy", QCOPY), ("tile loop", LOOP),
                        ("loop end → written", WRITE), ("CTA end spread", spread),
                        ("main → combine", COMBINE_AFTER_US), ("combine", COMBINE_US)):
            got = med(k)
            check(got is not None and abs(got - want) < 0.01, f"{k}: {got}, want {want}")
        # the five-piece CTA's three stamped pieces all count: 3 · 2 + 1 · 6 = 12 q copies
        check((ph.get("q copy") or {}).get("samples") == 12, f"q copy samples {(ph.get('q copy') or {}).get('samples')}")

        # a CTA start more than --gap after the last opens a launch: at a gap above the two
        # launches' distance they are one
        r = run(path, "--json", "--gap", str(LAUNCH_GAP_US + 50))
        check(r.returncode == 0 and json.loads(r.stdout)[0]["launches"] == 1, "a wide --gap merges the launches")

        r = run(path, "-v")
        check(r.returncode == 0 and "| q copy | 7.0 (7.0-7.0) | 12 |" in r.stdout, "markdown row of the q copy:\n" + r.stdout)
        check(r.stdout.count("  cta ") == 8 and "pieces 5" in r.stdout, "-v lists every sampled CTA")

        empty = os.path.join(d, "plain.txt")
        with open(empty, "w") as f:
            f.write("scenario variant kernel mode status\n")
        r = run(empty)
        check(r.returncode == 2 and "no PH lines" in r.stderr and "plain.txt" in r.stderr, f"no PH lines: {r.returncode} {r.stderr}")
        r = run(os.path.join(d, "missing.txt"))
        check(r.returncode == 2 and "missing.txt" in r.stderr, f"missing file: {r.returncode} {r.stderr}")

    for f in failures:
        print("FAIL:", f)
    print(f"{'FAIL' if failures else 'ok'}: phase_stamps ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
