# Stage 1: capture on the local testbed (root + upstream MPTCP), one job per campaign
# run (rule capture_run): a cluster executor spreads a campaign's runs over hosts,
# and a killed workflow redoes only the runs it had not finished.  When this
# machine cannot capture, the DAG starts from the committed samples and the
# reference tables in data/reference instead (rules/common.smk).


rule capture_run:
    """One run of a campaign (at the configured scale) -> its run folder (pcaps per end,
    meta.json, emulator logs); repeated by capture/ when the host stalled the emulator.
    """
    input:
        # ancient: editing a campaign never redoes runs already captured
        yaml=lambda wc: ancient(campaign_files()[wc.campaign]),
    output:
        directory(f"{config['raw_dir']}/{{campaign}}/{{run}}"),
    log:
        f"{RESULTS}/logs/capture/{{campaign}}/{{run}}.log",
    conda:
        "../environment.yml"
    # All of a host: one capture at a time (testbed, a local resource limited to 1 by
    # profiles/default) and no analysis beside it (every core), so jobs do not
    # disturb the timing of the links they measure.
    threads: workflow.cores
    resources:
        testbed=1,
    params:
        # capture run --out OUT writes OUT/<campaign>/<run>: the output's grandparent
        out=lambda wc, output: str(Path(output[0]).parent.parent),
        scale=config["scale"],
    shell:
        # exit 1 = the run failed (error.txt in its folder, no .done; listed in
        # <raw_dir>/<campaign>/campaign-status.json; `python -m capture run` or deleting
        # the folder retries it): go on, the finished runs are analysed. Exit 2 (invalid
        # campaign, missing tools) or 130 (interrupted) fail the job.
        "python -m capture run {input.yaml} --scale {params.scale} --out {params.out}"
        " --run {wildcards.run} --no-progress > {log} 2>&1 || [ $? -eq 1 ]"


checkpoint campaign_captured:
    """Every run of a campaign has had its job; then the DAG learns which runs finished
    (a failed run has no meta.json and is left out of the analysis: rules/common.smk).
    """
    input:
        lambda wc: capture_run_dirs(wc.campaign),
    output:
        touch(f"{RESULTS}/capture/{{campaign}}.done"),


if CAPTURE:

    rule capture_all:
        """Capture every run of every configured campaign at the configured scale."""
        input:
            expand(f"{RESULTS}/capture/{{campaign}}.done", campaign=CAMPAIGNS),

else:

    rule capture_all:
        """Nothing to capture on this machine (see the note printed at start-up)."""
        log:
            f"{RESULTS}/logs/capture/capture_all.log",
        conda:
            "../environment.yml"
        params:
            why="; ".join(capture_blockers()) or "capture=false",
        shell:
            "echo 'capture_all: not capturing on this machine: {params.why}' | tee {log} >&2"
