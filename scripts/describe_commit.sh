#!/bin/sh
# The commit verifybench is built from (meson's vcs_tag runs this): git's description, or
# $VB_COMMIT where the source is a copy without git metadata, or "unknown".
git describe --always --dirty --abbrev=12 2>/dev/null || echo "${VB_COMMIT:-unknown}"
