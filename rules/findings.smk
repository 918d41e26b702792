# Stage 3b: the papers' claims checked against the DuckDB file -> results/findings.csv
# (and results/lab-checks.csv: our emulated links against the papers' networks).
# One definition (the installed `findings` package); the notebooks show the same rows.


rule findings:
    """Every paper's findings (claim, paper's band, our value with a 95 % bootstrap CI, verdict) and the lab
    checks, from the DuckDB file only."""
    input:
        db=DB,
        code=ANALYSIS_CODE,
    output:
        findings=f"{RESULTS}/findings.csv",
        checks=f"{RESULTS}/lab-checks.csv",
    log:
        f"{RESULTS}/logs/findings.log",
    conda:
        "../environment.yml"
    shell:
        "python -m findings --db {input.db} --out {output.findings} --checks {output.checks} > {log} 2>&1"
