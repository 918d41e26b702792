# Stage 3b: the papers' claims checked against the DuckDB file -> results/findings.csv.
# One definition (notebooks/labfig/findings.py); the notebooks show the same rows.


rule findings:
    """Every paper's findings (claim, paper's value, ours, tolerance, verdict) from the DuckDB file only."""
    input:
        db=DB,
        module="notebooks/labfig/findings.py",
    output:
        f"{RESULTS}/findings.csv",
    log:
        f"{RESULTS}/logs/findings.log",
    params:
        py=PY,
    conda:
        "../environment.yml"
    shell:
        "PYTHONPATH=notebooks${{PYTHONPATH:+:$PYTHONPATH}} {params.py} -m labfig.findings"
        " --db {input.db} --out {output} > {log} 2>&1"
