#!/usr/bin/env python3
"""scripts/check_commit.sh, which gpu_proof.sh's build stage runs: in a scratch git repository
holding the two scripts, a commit whose files the tree still has matches; a stale HEAD named
while the files are a later commit's is a mismatch (exit 1, naming a changed file); a label that
says the tree is no commit (-dirty) and a commit the copy's history lacks are not checked
(exit 0, saying so). Needs git, no GPU; skipped (exit 77) without git."""
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if shutil.which("git") is None:
    print("check_commit: git not found, skipped")
    sys.exit(77)

with tempfile.TemporaryDirectory() as d:
    os.mkdir(os.path.join(d, "scripts"))
    for name in ("check_commit.sh", "describe_commit.sh"):
        shutil.copy(os.path.join(root, "scripts", name), os.path.join(d, "scripts", name))
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1", HOME=d)
    env.pop("VB_COMMIT", None)

    def git(*args):
        return subprocess.run(["git", "-C", d, *args], env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    def check(*args):
        p = subprocess.run(["sh", os.path.join(d, "scripts", "check_commit.sh"), *args], env=env,
                           capture_output=True, text=True)
        return p.returncode, p.stdout.strip()

    git("init", "-q")
    kernel = os.path.join(d, "kernel.cu")
    with open(kernel, "w") as f:
        f.write("constexpr float kLazy = 8.f;\n")
    git("add", "-A")
    git("commit", "-q", "-m", "first")
    first = git("rev-parse", "HEAD")

    rc, out = check()  # the label describe_commit.sh gives a clean tree: its commit
    assert rc == 0 and "match it" in out, (rc, out)
    rc, out = check(first)
    assert rc == 0 and "match it" in out, (rc, out)

    with open(kernel, "w") as f:  # the files move on; HEAD (the stale metadata) does not
        f.write("constexpr float kLazy = 16.f;\n")
    rc, out = check(first)
    assert rc == 1 and out.startswith("COMMIT MISMATCH") and "kernel.cu" in out, (rc, out)
    rc, out = check()  # unnamed: describe_commit.sh says -dirty, which is honest
    assert rc == 0 and "-dirty" in out and "no commit" in out, (rc, out)
    rc, out = check("0123456789ab")
    assert rc == 0 and "not checked" in out, (rc, out)

    git("commit", "-q", "-am", "second")  # the same files, committed: the new commit matches
    rc, out = check(git("rev-parse", "HEAD"))
    assert rc == 0 and "match it" in out, (rc, out)
    rc, out = check(first)
    assert rc == 1, (rc, out)
print("check_commit: a stale commit is a mismatch, a matching one passes, a dirty or unknown label is not checked")
