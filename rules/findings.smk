# Stage 3a: the papers' claims checked against the DuckDB file -> results/findings.csv
# (one row per statement of each paper's inventory), results/findings-groups.csv (every
# compared group's estimate: what the notebooks draw) and results/lab-checks.csv (our
# emulated links against the papers' networks).


rule findings:
    """Every paper's findings (the paper's number and band, ours with a 95 % interval, magnitude and direction
    verdicts), their group estimates and the lab checks, from the DuckDB file only."""
    input:
        db=DB,
        code=ANALYSIS_CODE,
    output:
        findings=f"{RESULTS}/findings.csv",
        checks=f"{RESULTS}/lab-checks.csv",
        groups=f"{RESULTS}/findings-groups.csv",
    log:
        f"{RESULTS}/logs/findings.log",
    conda:
        "../environment.yml"
    shell:
        "python -m papers findings --db {input.db} --out {output.findings} --checks {output.checks}"
        " --groups {output.groups} > {log} 2>&1"
