#!/usr/bin/env bash
# Capture the five paper campaigns at the standard scale on a quiet host, one campaign at a
# time, then make every run's tables and the thinned reference folders (data/reference,
# or --out for a replicate). Resumable: finished runs are kept, half runs redone.
#
#   scripts/capture-reference.sh RAW TABLES [--seed N] [--out DIR] [--tables-only]
#                                [--only REGEX] [--add] [campaign ...]
#
# --tables-only: capture nothing; make the tables of RAW's finished runs with this
# checkout's pipeline (runs captured at another commit, analysed with this one).
# --only REGEX: capture only the runs whose ids match (a long campaign in parts);
# --add: add the runs to the campaign folders already in DIR instead of rebuilding them
# (the parts of a campaign captured over several sittings; `pipeline reference --add`).
# RAW and TABLES are folders of their own (not data/raw: a replicate with another seed
# needs its own). Nothing else may run on the host meanwhile: every run records
# host.busy_pct, and data/reference/README.md reports its median and 90th percentile.
# The tables are made JOBS (default 2) runs at a time, once every capture is over.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,18p' "$0"; exit 2; }
raw=$1 tables=$2; shift 2
seed=() only=() add=() out=data/reference capture=1
while [ $# -gt 0 ]; do
  case $1 in
    --seed) seed=(--seed "$2"); shift 2 ;;
    --only) only=(--only "$2"); shift 2 ;;
    --add) add=(--add); shift ;;
    --out) out=$2; shift 2 ;;
    --tables-only) capture=0; shift ;;
    *) break ;;
  esac
done
campaigns=("$@")
[ ${#campaigns[@]} -gt 0 ] || campaigns=(chen cs244 deng ditg ferlin)
py=${PYTHON:-.venv/bin/python}
for c in "${campaigns[@]}"; do
  [ "$capture" = 1 ] || break
  echo "== capture $c ($(date -u +%FT%TZ))"
  "$py" -m capture run "papers/$c/campaign.yaml" --scale standard --out "$raw" "${seed[@]}" "${only[@]}" --no-progress || true
done
# the captures are over: the tables may use both cores (JOBS at a time)
for c in "${campaigns[@]}"; do
  echo "== tables $c ($(date -u +%FT%TZ))"
  for run in "$raw/$c"/*/; do
    run=${run%/}
    [ -f "$run/.done" ] || continue
    dest="$tables/$c/$(basename "$run")"
    [ -f "$dest/runs.parquet" ] || printf '%s\0%s\0' "$run" "$dest"
  done | xargs -0 -n 2 -P "${JOBS:-2}" sh -c \
    '"$0" -m pipeline tables "$1" --out "$2" >/dev/null || echo "tables failed: $1"' "$py"
done
big=() small=()
for c in "${campaigns[@]}"; do
  if [ "$c" = ditg ]; then small+=("$tables/$c"); else big+=("$tables/$c"); fi
done
[ ${#big[@]} -eq 0 ] || "$py" -m pipeline reference "${big[@]}" --out "$out" --cap 20000 "${add[@]}"
[ ${#small[@]} -eq 0 ] || "$py" -m pipeline reference "${small[@]}" --out "$out" --cap 400 "${add[@]}"
echo "== done ($(date -u +%FT%TZ))"
