#!/usr/bin/env bash
# Runs the tool block of a Markdown file as written: the first ```sh block after the line that
# says "runs as written", in a fresh directory holding the demo's arrays (DEMO --keep DIR), with
# the b2nd tool first on the PATH. Exits 77 (skipped) when the tool was built without libhdf5.
#
#   run_tool_block.sh DOC.md DEMO B2ND_DIR
set -euo pipefail
doc=$1 demo=$2 tooldir=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if "$tooldir/b2nd" ls /nonexistent.h5 2>&1 | grep -q "no libhdf5"; then
  echo "B2ND-SKIP: this build has no libhdf5"
  exit 77
fi
awk '/runs as written/{f=1} f && /^```sh/{g=1; next} g && /^```/{exit} g{print}' "$doc" \
  > "$dir/block.sh"
[ -s "$dir/block.sh" ] || { echo "$doc: no tool block after 'runs as written'"; exit 1; }
"$demo" --keep "$dir" > /dev/null
cd "$dir"
PATH="$tooldir:$PATH" bash -euo pipefail -x block.sh
