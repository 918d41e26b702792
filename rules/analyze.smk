# Stage 2: per-run tables (one job per run folder, so --cores parallelises and only
# changed runs re-run), then one DuckDB file for all runs.


rule run_tables:
    """pcaps + meta.json of one run -> one Parquet per table (pipeline.schema.TABLES)."""
    input:
        run_inputs,
    output:
        expand(f"{TABLE_DIR}/{{{{rundir}}}}/{{table}}.parquet", table=TABLE_NAMES),
    log:
        f"{RESULTS}/logs/tables/{{rundir}}.log",
    conda:
        "../environment.yml"
    params:
        out=lambda wc: f"{TABLE_DIR}/{wc.rundir}",
    shell:
        "python -m pipeline tables {wildcards.rundir} --out {params.out} > {log} 2>&1"


rule load_db:
    """All per-run tables (+ data/reference when not capturing) -> the single DuckDB file the notebooks read.
    The file is a store (pipeline/store.py): each run loaded replaces its own rows, other runs and any
    table of the user's stay, so the output is updated in place (update()), never deleted first.
    """
    input:
        captured_campaigns,
        db_table_files,
    output:
        update(DB),
    log:
        f"{RESULTS}/logs/load.log",
    conda:
        "../environment.yml"
    params:
        dirs=lambda wc: " ".join(db_table_dirs(wc)),
    shell:
        # no run folders at all: an empty database with every table, so the
        # notebooks still render (their empty states explain what is missing)
        "if [ -n '{params.dirs}' ]; then python -m pipeline load {params.dirs} --db {output};"
        " else python -m pipeline.empty {output}; fi > {log} 2>&1"


rule analyze:
    """Tables for every run and the DuckDB file."""
    input:
        DB,
