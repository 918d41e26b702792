#!/usr/bin/env bash
# Snakemake runs this in each rule's conda environment right after creating it
# (`snakemake --use-conda`, from the workflow's directory): the rules call the lab's own
# packages (pipeline, capture, labfig, findings), so install them into it. Their
# dependencies come from environment.yml.
set -euo pipefail
python -m pip install --quiet --no-deps -e .
