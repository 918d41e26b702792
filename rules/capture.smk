# Stage 1: capture campaigns on the local testbed (root + upstream MPTCP).
# Campaigns run one after another (they share the testbed), each resumable by
# capture/ itself: a finished run is never redone.  When this machine cannot
# capture, the DAG starts from the committed samples and the reference tables in
# data/reference instead (rules/common.smk).


checkpoint capture_campaign:
    input:
        yaml=lambda wc: campaign_files()[wc.campaign],
        after=previous_campaign,
    output:
        touch(f"{RESULTS}/capture/{{campaign}}.done"),
    log:
        f"{RESULTS}/logs/capture/{{campaign}}.log",
    conda:
        "../environment.yml"
    params:
        out=config["raw_dir"],
        scale=config["scale"],
    shell:
        # exit 1 = some runs failed (listed in the log and in <raw_dir>/<campaign>/
        # campaign-status.json; they are retried next time): go on with the finished
        # runs. Exit 2 (invalid campaign, missing tools) or 130 (interrupted) stop here.
        "python -m capture run {input.yaml} --scale {params.scale} --out {params.out} --no-progress"
        " > {log} 2>&1 || [ $? -eq 1 ]"


if CAPTURE:

    rule capture_all:
        """Capture every configured campaign at the configured scale."""
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
