#!/bin/sh
# Whether the tree's tracked files are the commit a build records (describe_commit.sh's answer,
# or $VB_COMMIT). In a copy of the tree whose git metadata is stale, as on a GPU machine,
# `git rev-parse HEAD` names an older commit: a run labelled with it claims code it did not run.
# Prints one line. Exit 1 when the files differ from the commit named; 0 when they match, when
# the label itself says the tree is no commit (-dirty, unknown), or when this copy's git cannot
# tell (the commit is not in its history).
# usage: scripts/check_commit.sh [COMMIT]   (default: what describe_commit.sh answers)
set -u
cd "$(dirname "$0")/.."
c=${1:-$(sh scripts/describe_commit.sh)}
case $c in
*-dirty | unknown)
    echo "commit $c: the label says the tree is no commit, nothing to check"
    exit 0
    ;;
esac
if ! git cat-file -e "$c^{commit}" 2>/dev/null; then
    echo "commit $c: not in this copy's git history, not checked"
    exit 0
fi
if ! changed=$(git diff --name-only "$c" -- 2>/dev/null); then
    echo "commit $c: git could not compare the tree with it, not checked"
    exit 0
fi
if [ -z "$changed" ]; then
    echo "commit $c: the tree's tracked files match it"
    exit 0
fi
echo "COMMIT MISMATCH: the build records $c, but the tree's tracked files differ from it:" \
    "$(echo "$changed" | head -3 | tr '\n' ' ')"
exit 1
