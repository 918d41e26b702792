# The README's commands: `make test`, `make reproduce-all` and `make lab`.
# Each does its own set-up: Debian packages (as root), the virtual environment.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
CORES   ?= all
LINKEM  := capture/linkem/target/release/linkem
LINKEM_SRC := $(wildcard capture/linkem/Cargo.toml capture/linkem/src/*.rs capture/linkem/src/**/*.rs)
# rustup installs cargo in ~/.cargo/bin, which a non-login shell (CI) may not have on PATH.
export PATH := $(PATH):$(HOME)/.cargo/bin

.PHONY: test lint reproduce-all lab system venv linkem cc thirdparty bench bench-memory clean

system:
	@scripts/setup-system.sh

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# compat: a plain path entry in a .pth; the default editable mode imports a
	# finder module at every interpreter start (~8 ms of a ~0.5 s `pipeline analyze`).
	$(BIN)/pip install -q -e '.[lab,test]' --config-settings editable_mode=compat
	$(BIN)/python scripts/check-python.py
	# Our own modules' bytecode, as pip compiles the packages it installs: a shell with
	# PYTHONDONTWRITEBYTECODE set would otherwise compile them at every start (~15 ms).
	$(BIN)/python -m compileall -q pipeline capture findings labfig papers report > /dev/null
	touch $(STAMP)

# The native pcap decoder (pipeline/pcapdecode, Rust + pyo3), built by maturin into
# the venv; rebuilt when its sources change.
DECODER_SRC := $(wildcard pipeline/pcapdecode/Cargo.toml pipeline/pcapdecode/Cargo.lock pipeline/pcapdecode/pyproject.toml pipeline/pcapdecode/src/*.rs pipeline/pcapdecode/src/python/*.rs pipeline/pcapdecode/src/decoder/*.rs)
DECODER := $(VENV)/.pcapdecode-built

$(DECODER): $(STAMP) $(DECODER_SRC)
	@scripts/check-rust.sh pipeline/pcapdecode
	$(BIN)/pip install -q ./pipeline/pcapdecode
	touch $(DECODER)

venv: $(STAMP) $(DECODER)

# The native link emulator (capture/linkem), built when its sources exist.
linkem:
	@if [ -f capture/linkem/Cargo.toml ]; then scripts/check-rust.sh capture/linkem && \
		cargo build -q --release --manifest-path capture/linkem/Cargo.toml; fi

# The BPF congestion controls (capture/cc: lia, olia, balia) and their loader;
# skipped with a message on a kernel without BTF.
cc: system
	@$(MAKE) --no-print-directory -C capture/cc

# Linters check, they never rewrite (no tree-wide reformatting: it breaks everyone's merges).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint

# Other people's MPTCP captures for the cross-check tests (never committed).
thirdparty: venv
	@scripts/fetch-thirdparty.sh $(BIN)/pip

# (--durations: the slowest tests, listed at the end: CI's half hour is mostly theirs)
test: system venv linkem cc thirdparty lint
	@if [ -f capture/linkem/Cargo.toml ]; then cargo test -q --release --manifest-path capture/linkem/Cargo.toml; fi
	cargo test -q --manifest-path pipeline/pcapdecode/Cargo.toml
	$(BIN)/pytest -ra --durations=20

# Verdicts, figures and report from the committed standard-scale reference (minutes);
# SCALE=standard|quick|paper captures that scale here first (root; quick: figures only).
# Each reproduction has a results folder of its own (results/, results/<scale>/): a
# folder's database keeps every run loaded into it. Where a scale's captures go is the
# scale table's (capture/scales.py; `python -m capture scales` prints it).
# (RAW is expanded when the recipe runs, after the venv it asks exists)
RESULTS := results$(if $(SCALE),/$(SCALE))
RAW      = $(shell $(BIN)/python -m capture scales --raw-dir $(SCALE))
reproduce-all: system venv linkem cc
	$(BIN)/snakemake --cores $(CORES) reproduce_all --logger mptcp-lab $(if $(SCALE),--config capture=true scale=$(SCALE) results_dir=$(RESULTS) raw_dir=$(RAW))
	@# exit 3 when a failed capture left a judged paper with fewer runs than planned
	@$(BIN)/python -m report.summary --check --results $(RESULTS)

# JupyterLab on notebooks/ with the current database (results/lab.duckdb, else the
# samples', analysed on first use); DB=path picks another, LAB_ARGS go to jupyter lab.
lab: system venv
	$(BIN)/python -m labfig.lab $(if $(DB),--db $(DB)) $(LAB_ARGS)

bench: system venv
	$(BIN)/python benchmarks/pipeline_bench.py

# Memory and speed of the pipeline on synthetic 1M, 5M and 10M-packet captures (written
# under data/bench/) against tshark, measured in the same run.
bench-memory: system venv
	$(BIN)/python benchmarks/pipeline_bench.py --memory

clean:
	rm -rf results .snakemake
