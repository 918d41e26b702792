# The README's commands: `make test`, `make reproduce-all` and `make lab`.
# Each does its own set-up: Debian packages (as root), the virtual environment.
# Each set-up stage prints one line ("set-up: venv (.venv) … ok (already there)"); the
# tools' own output (apt, pip, setuptools, maturin, cargo) goes to a log per stage in
# results/logs/setup/, whose last lines are printed when a stage fails (scripts/quiet.sh).
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
CORES   ?= all
LINKEM  := capture/linkem/target/release/linkem
LINKEM_SRC := $(wildcard capture/linkem/Cargo.toml capture/linkem/src/*.rs capture/linkem/src/**/*.rs)
# rustup installs cargo in ~/.cargo/bin, which a non-login shell (CI) may not have on PATH.
export PATH := $(PATH):$(HOME)/.cargo/bin
QUIET      := scripts/quiet.sh
SETUP_LOGS := results/logs/setup
# When this make started (ns since the epoch), read off a new file: the clock file times
# come from (coarser than `date`'s). A stage whose product is older had nothing to do and
# says "already there"; reproduce-all says "up to date" when the report is older.
export SETUP_T0 := $(shell t=$$(mktemp) && date -r "$$t" +%s%N; rm -f "$$t")

.PHONY: test lint reproduce-all lab system venv venv-status linkem cc thirdparty bench bench-memory wheels replicate clean

system:
	@$(QUIET) begin "system packages"
	@$(QUIET) run $(SETUP_LOGS)/system.log scripts/setup-system.sh
	@$(QUIET) end

# The editable install is `compat`: a plain path entry in a .pth; the default editable
# mode imports a finder module at every interpreter start (~8 ms of a ~0.5 s `pipeline
# analyze`). compileall: our own modules' bytecode, as pip compiles the packages it
# installs: a shell with PYTHONDONTWRITEBYTECODE set would otherwise compile them at every
# start (~15 ms).
$(STAMP): pyproject.toml
	@$(QUIET) begin "venv ($(VENV))"
	@$(QUIET) run $(SETUP_LOGS)/venv.log $(PY) -m venv $(VENV)
	@$(QUIET) run $(SETUP_LOGS)/venv.log $(BIN)/pip install -q --upgrade pip
	@$(QUIET) run $(SETUP_LOGS)/venv.log $(BIN)/pip install -q -e '.[lab,test]' --config-settings editable_mode=compat
	@$(QUIET) run $(SETUP_LOGS)/venv.log $(BIN)/python scripts/check-python.py
	@$(QUIET) run $(SETUP_LOGS)/venv.log $(BIN)/python -m compileall -q pipeline capture findings labfig papers report
	@touch $(STAMP)
	@$(QUIET) end $(STAMP) installed

# The native pcap decoder (pipeline/pcapdecode, Rust + pyo3), built by maturin into
# the venv; rebuilt when its sources change.
DECODER_SRC := $(wildcard pipeline/pcapdecode/Cargo.toml pipeline/pcapdecode/Cargo.lock pipeline/pcapdecode/pyproject.toml pipeline/pcapdecode/src/*.rs pipeline/pcapdecode/src/python/*.rs pipeline/pcapdecode/src/decoder/*.rs)
DECODER := $(VENV)/.pcapdecode-built

# (venv-status, order-only: the venv's line comes before the decoder's)
$(DECODER): $(STAMP) $(DECODER_SRC) | venv-status
	@$(QUIET) begin "decoder (pipeline/pcapdecode)"
	@$(QUIET) run $(SETUP_LOGS)/decoder.log scripts/check-rust.sh pipeline/pcapdecode
	@$(QUIET) run $(SETUP_LOGS)/decoder.log $(BIN)/pip install -q ./pipeline/pcapdecode
	@touch $(DECODER)
	@$(QUIET) end $(DECODER) built

venv: $(STAMP) $(DECODER)
	@$(QUIET) already $(DECODER) "decoder (pipeline/pcapdecode)"

# the venv's line when its stamp's recipe had nothing to do
venv-status: $(STAMP)
	@$(QUIET) already $(STAMP) "venv ($(VENV))"

# The native link emulator (capture/linkem), built when its sources exist.
linkem:
	@if [ -f capture/linkem/Cargo.toml ]; then $(QUIET) begin "link emulator (capture/linkem)" && \
		$(QUIET) run $(SETUP_LOGS)/linkem.log scripts/check-rust.sh capture/linkem && \
		$(QUIET) run $(SETUP_LOGS)/linkem.log cargo build -q --release --manifest-path capture/linkem/Cargo.toml && \
		$(QUIET) end $(LINKEM); fi

# The BPF congestion controls (capture/cc: lia, olia, balia) and their loader;
# skipped with a message on a kernel without BTF. (Its build/ folder changes when
# anything in it is rebuilt; there is none when the kernel has no BTF.)
cc: system
	@$(QUIET) begin "congestion controls (capture/cc)"
	@$(QUIET) run $(SETUP_LOGS)/cc.log $(MAKE) --no-print-directory -C capture/cc
	@$(QUIET) end capture/cc/build built "skipped: the kernel has no BTF (lia, olia, balia unavailable)"

# Linters check, they never rewrite (no tree-wide reformatting: it breaks everyone's merges).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint

# Other people's MPTCP captures for the cross-check tests (never committed).
thirdparty: venv
	@$(QUIET) begin "third-party captures (data/thirdparty)"
	@$(QUIET) run $(SETUP_LOGS)/thirdparty.log scripts/fetch-thirdparty.sh $(BIN)/pip
	@$(QUIET) end data/thirdparty/.complete fetched \
		"not fetched (the tests that need them skip; why: $(SETUP_LOGS)/thirdparty.log)"

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
	$(BIN)/snakemake --cores $(CORES) reproduce_all --logger mptcp-lab $(if $(SCALE),--logger-mptcp-lab-scale $(SCALE) --config capture=true scale=$(SCALE) results_dir=$(RESULTS) raw_dir=$(RAW))
	@# exit 3 when a failed capture left a judged paper with fewer runs than planned; and,
	@# also when Snakemake had nothing to do ("up to date": the report predates this make),
	@# where the report is and how many findings it has
	@$(BIN)/python -m report.summary --check --where --since=$(SETUP_T0) --results $(RESULTS)

# The committed replicate (data/replicate: the five campaigns again with another seed)
# judged against the committed reference, claim by claim: results/replicate.{csv,md}.
replicate: system venv
	@mkdir -p results
	$(BIN)/python -m papers replicate --reference data/reference --replicate data/replicate \
		--out results/replicate.csv --markdown results/replicate.md

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

# Wheels of the package and of the native decoder (an abi3 wheel: any CPython >= 3.10 of
# this platform) into dist/: `pip install dist/*.whl` on such a machine needs no Rust.
wheels: venv
	$(BIN)/pip wheel -q --no-deps -w dist . ./pipeline/pcapdecode

clean:
	rm -rf results .snakemake
