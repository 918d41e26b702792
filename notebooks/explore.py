# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Explore one run
#
# When a finding looks odd, look at the run behind it: its configuration, its
# subflows, the **time-sequence graph** of its connection (as tcptrace/xplot and
# mptcptrace draw it), the RTT and throughput of each subflow over time, and the
# packets behind the outliers, dissected by tshark (Wireshark's reading of the same
# packet).
#
# Set `RUN` in the next cell (or execute with
# `python -m report.execute notebooks/explore.py --db DB --figures DIR --out OUT.ipynb -p RUN=<run id>`
# from the checkout).
# The same charts from the command line:
# `python -m pipeline plot seq|rtt|throughput RUN --db DB -o out.svg`.
# Charts zoom with the mouse wheel and pan by dragging.

# %% tags=["parameters"]
import os

DB = os.environ.get("MPTCP_LAB_DB", "../results/lab.duckdb")  # `make lab` gives its kernels one
FIGURES = "../results/figures/explore"
RUN = ""  # a run id; empty: the first run that carried data

# %%
import polars as pl
from IPython.display import Markdown, display

from labfig import connect, open_lab, query, save
from pipeline.runplots import configured_paths, outliers, plot_rtt, plot_seq, plot_throughput, run_view, runs, show

pl.Config.set_tbl_rows(40)
pl.Config.set_tbl_cols(30)
pl.Config.set_fmt_str_lengths(80)
open_lab("explore", DB, FIGURES)
con = connect(DB)
if not RUN:
    RUN = query("""SELECT run_id FROM connections WHERE coalesce(payload_bytes, 0) > 0
                   GROUP BY run_id ORDER BY run_id LIMIT 1""")["run_id"][0]
view = run_view(con, RUN)
display(Markdown(f"**Run `{RUN}`** of {len(runs(con))} in `{DB}`: its main connection carried data "
                 f"**{'down (a download)' if view.direction == 'down' else 'up (an upload)'}**; "
                 f"receiver's trace `{view.receiver[0] if view.receiver else '-'}`, "
                 f"sender's trace `{view.sender[0] if view.sender else '-'}`. {view.note}"))

# %% [markdown]
# ## Configuration
# What the run was configured as (`run_config`, from its meta.json) and, per path, the
# emulator's settings.

# %%
cfg = query("SELECT * FROM run_config WHERE run_id = $run", {"run": RUN})
display(cfg.transpose(include_header=True, header_name="setting", column_names=["value"])
        .filter(pl.col("value").is_not_null()))
display(configured_paths(con, RUN, view.direction))

# %% [markdown]
# ## Subflows
# Per trace and direction (`subflows`): loss and RTT are the sender's (server for a
# download), the traffic share either side's.

# %%
display(query("""
    SELECT vantage, conn_id, subflow_id, direction, path, client_addr || ':' || client_port AS client,
           is_primary, data_packets, retransmitted_packets, round(loss_rate, 4) AS loss_rate, payload_bytes,
           round(traffic_share, 3) AS traffic_share, rtt_samples, round(rtt_min_ms, 2) AS rtt_min_ms,
           round(rtt_median_ms, 2) AS rtt_median_ms, round(rtt_max_ms, 2) AS rtt_max_ms
    FROM subflows WHERE run_id = $run AND data_packets > 0
    ORDER BY vantage, conn_id, direction, subflow_id""", {"run": RUN}))

# %% [markdown]
# ## Time-sequence graph
# Top: the data sequence number of every packet at the receiver, coloured by the subflow
# that carried it; a horizontal line from a packet is its out-of-order delay (it arrived
# there and was in order at the line's end). Bottom: each subflow's own sequence numbers
# with its cumulative ACK (dashed steps). Crosses are retransmissions, triangles
# reinjections (data another subflow had carried).

# %%
seq, seq_df = plot_seq(con, RUN)
save(seq, "explore-seq", f"Time-sequence graph of {RUN}")

# %%
seq_df.group_by("subflow", "kind", "mark").agg(pl.len().alias("rows")).sort("subflow", "kind", "mark")

# %% [markdown]
# ## RTT over time
# The sender's RTT samples per subflow, with the emulator's configured round-trip delay
# as dashed lines and recorded outages shaded.

# %%
rtt, rtt_df = plot_rtt(con, RUN)
save(rtt, "explore-rtt", f"RTT over time of {RUN}")

# %% [markdown]
# ## Throughput per subflow

# %%
tput, tput_df = plot_throughput(con, RUN)
save(tput, "explore-throughput", f"Throughput per subflow of {RUN}")

# %% [markdown]
# ## Outliers and their packets
# The largest out-of-order delays (receiver's trace) and RTTs (sender's trace), each
# with its frame number and the command that prints tshark's dissection of it.

# %%
out = outliers(con, RUN)
if out.height:
    display(out.drop("show").with_columns(pl.col("trace").str.split("/").list.last()))
    for r in out.iter_rows(named=True):
        print(f"{r['metric']:>15} {r['value']:9.3f}  frame {r['frame']:>6}:  {r['show']}")
else:
    display(Markdown("No OFO delay above zero and no RTT sample in this run."))

# %% [markdown]
# tshark's dissection of the first outlier's packet (MPTCP options and tshark's own
# analysis flags), to check our number against Wireshark's reading:

# %%
if out.height:
    first = out.row(0, named=True)
    print(f"{first['metric']} = {first['value']:.3f} at frame {first['frame']} of {first['trace']}\n")
    show(first["trace"], first["frame"])
