#!/usr/bin/env bash
# Capture the five paper campaigns at the standard scale on a quiet host, one campaign at a
# time, then make every run's tables and the thinned reference folders (data/reference,
# or --out for a replicate). Resumable: finished runs are kept, half runs redone.
#
#   scripts/capture-reference.sh RAW TABLES [--seed N] [--out DIR] [campaign ...]
#
# RAW and TABLES are folders of their own (not data/raw: a replicate with another seed
# needs its own). Nothing else may run on the host meanwhile: every run records
# host.busy_pct, and data/reference/README.md reports its median and 90th percentile.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,10p' "$0"; exit 2; }
raw=$1 tables=$2; shift 2
seed=() out=data/reference
while [ $# -gt 0 ]; do
  case $1 in
    --seed) seed=(--seed "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) break ;;
  esac
done
campaigns=("$@")
[ ${#campaigns[@]} -gt 0 ] || campaigns=(chen cs244 deng ditg ferlin)
py=${PYTHON:-.venv/bin/python}
for c in "${campaigns[@]}"; do
  echo "== capture $c ($(date -u +%FT%TZ))"
  "$py" -m capture run "papers/$c/campaign.yaml" --scale standard --out "$raw" "${seed[@]}" --no-progress || true
done
for c in "${campaigns[@]}"; do
  echo "== tables $c ($(date -u +%FT%TZ))"
  for run in "$raw/$c"/*/; do
    run=${run%/}
    [ -f "$run/.done" ] || continue
    dest="$tables/$c/$(basename "$run")"
    [ -f "$dest/runs.parquet" ] && continue
    "$py" -m pipeline tables "$run" --out "$dest" >/dev/null || echo "tables failed: $run"
  done
done
big=() small=()
for c in "${campaigns[@]}"; do
  if [ "$c" = ditg ]; then small+=("$tables/$c"); else big+=("$tables/$c"); fi
done
[ ${#big[@]} -eq 0 ] || "$py" -m pipeline reference "${big[@]}" --out "$out" --cap 20000
[ ${#small[@]} -eq 0 ] || "$py" -m pipeline reference "${small[@]}" --out "$out" --cap 400
echo "== done ($(date -u +%FT%TZ))"
