#!/bin/sh
# The commit verifybench is built from (meson's vcs_tag runs this): $VB_COMMIT when set (a
# copy of the tree whose git metadata may be stale or missing, as on a GPU machine), else
# git's description, else "unknown".
[ -n "${VB_COMMIT:-}" ] && { echo "$VB_COMMIT"; exit 0; }
git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown
