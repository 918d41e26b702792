# Stage 3b: one notebook per paper.  papers/<nb>/notebook.py (jupytext percent script) ->
# results/notebooks/<nb>.ipynb (paired notebook) -> executed against the DuckDB
# file, writing its figures (SVG, PNG, interactive HTML) to results/figures/<nb>/
# -> exported to HTML for the report.


rule pair_notebook:
    """Jupytext: the committed percent script -> its .ipynb twin."""
    input:
        "papers/{nb}/notebook.py",
    output:
        f"{NOTEBOOK_DIR}/{{nb}}.ipynb",
    log:
        f"{RESULTS}/logs/notebooks/{{nb}}.pair.log",
    conda:
        "../environment.yml"
    shell:
        "python -m jupytext --quiet --to ipynb --output {output} {input} > {log} 2>&1"


rule execute_notebook:
    """Run a notebook top to bottom on the DuckDB file; it renders its figures."""
    input:
        notebook=f"{NOTEBOOK_DIR}/{{nb}}.ipynb",
        db=DB,
        findings=rules.findings.output,
        code=ANALYSIS_CODE,
    output:
        executed=f"{NOTEBOOK_DIR}/{{nb}}.executed.ipynb",
        manifest=f"{FIGURE_DIR}/{{nb}}/manifest.json",
    log:
        f"{RESULTS}/logs/notebooks/{{nb}}.execute.log",
    conda:
        "../environment.yml"
    params:
        figures=lambda wc, output: os.path.dirname(output.manifest),
        findings=lambda wc, input: os.path.dirname(input.findings[0]),
        timeout=config["notebook_timeout_s"],
    shell:
        "python -m report.execute {input.notebook} --db {input.db} --figures {params.figures}"
        " --findings {params.findings} --out {output.executed} --timeout {params.timeout} > {log} 2>&1"


rule notebook_html:
    """Executed notebook -> a standalone HTML page for the report that works offline
    (report/notebook_html.py: the Vega bundle inline, no CDN)."""
    input:
        f"{NOTEBOOK_DIR}/{{nb}}.executed.ipynb",
    output:
        f"{REPORT_DIR}/notebooks/{{nb}}.html",
    log:
        f"{RESULTS}/logs/notebooks/{{nb}}.html.log",
    conda:
        "../environment.yml"
    shell:
        "python -m report.notebook_html {input} --out {output} > {log} 2>&1"


rule figures:
    """Every paper's figures (each notebook renders its own)."""
    input:
        expand(f"{FIGURE_DIR}/{{nb}}/manifest.json", nb=NOTEBOOKS),


rule notebooks:
    """Every notebook executed and exported to HTML."""
    input:
        expand(f"{NOTEBOOK_DIR}/{{nb}}.executed.ipynb", nb=NOTEBOOKS),
        expand(f"{REPORT_DIR}/notebooks/{{nb}}.html", nb=NOTEBOOKS),
