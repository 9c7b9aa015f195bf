#!/usr/bin/env python3
"""What every script that reads a verifybench results file needs: the schema check, and
whether the file is a whole run. A run stopped by a signal, or the checkpoint a killed run
left behind, says `"complete": false`; its numbers cover only the scenarios it reached, so a
table, plot or comparison made from it must say so or refuse it.

usage: scripts/results_file.py --incomplete RESULTS.json
  prints why the run is not whole (nothing when it is); exit 2 when the file is not a results file
"""
import json
import sys

SCHEMA = "verifybench.results/1"


def load(path):
    """The results file as a dict; ValueError naming the file when it is not one."""
    with open(path) as f:
        try:
            d = json.load(f)
        except ValueError as e:
            raise ValueError(f"{path}: not JSON ({e})") from e
    if not isinstance(d, dict) or d.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a {SCHEMA} file")
    return d


def incomplete(results):
    """Why a run is not whole ("interrupted by SIGINT", "a checkpoint of an unfinished run"), or
    None. Files written before the field existed are whole."""
    if results.get("complete", True) is not False:
        return None
    by = results.get("interrupted_by")
    return f"interrupted by {by}" if by else "a checkpoint of an unfinished run"


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--incomplete":
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        sys.exit(2)
    try:
        why = incomplete(load(sys.argv[2]))
    except (OSError, ValueError) as e:
        print(f"results_file.py: {e}", file=sys.stderr)
        sys.exit(2)
    if why:
        print(why)
