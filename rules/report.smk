# Stage 4: results/report/index.html linking every figure and notebook.


rule report:
    """One HTML page linking every figure (SVG, PNG, interactive) and notebook."""
    input:
        manifests=expand(f"{FIGURE_DIR}/{{nb}}/manifest.json", nb=NOTEBOOKS),
        notebooks=expand(f"{REPORT_DIR}/notebooks/{{nb}}.html", nb=NOTEBOOKS),
        db=DB,
        findings=f"{RESULTS}/findings.csv",
        template="report/index.html.j2",
        code=ANALYSIS_CODE,
    output:
        f"{REPORT_DIR}/index.html",
    log:
        f"{RESULTS}/logs/report.log",
    conda:
        "../environment.yml"
    params:
        figures=lambda wc, input: os.path.dirname(os.path.dirname(input.manifests[0])),
        source=data_source(),
        # failed captures leave no run folder: only their campaign's status file has them
        status=(
            " ".join(
                f"{config['raw_dir']}/{c}/campaign-status.json" for c in CAMPAIGNS
            )
            if CAPTURE
            else ""
        ),
    shell:
        "python -m report.page --template {input.template} --db {input.db}"
        " --figures {params.figures} --notebooks {input.notebooks} --findings {input.findings}"
        " --source {params.source:q} --status {params.status}"
        " --out {output} > {log} 2>&1"
