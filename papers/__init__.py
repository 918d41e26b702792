"""The papers the lab reproduces, one folder each, and the registry of them.

A paper's folder (``papers/<id>/``) holds everything that is about that paper and
nothing else: its campaign (``campaign.yaml``) and link profiles with the paper's
quotes (``profiles.yaml``), its claim inventory (``inventory.yaml``: every headline
quantitative statement, each mapped to a claim or to "not reproducible here"), its
claims (``claims.py``), its notebook (``notebook.py``) and its synthetic test grid
(``synthetic.py``). The workflow, the findings, the report and the tests read
``PAPERS``; the pipeline (``pipeline/``) knows no paper.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent
SEEDS = ROOT.parent.parent / "shared" / "seeds"  # the papers' texts, beside the checkout (not shipped)


@dataclass(frozen=True)
class Paper:
    id: str  # also the campaign's name and the folder's
    title: str  # as the report heads its section
    cite: str  # short citation
    seed_file: str  # the paper's text in ../shared/seeds/
    # the figures its notebook draws (labfig.charts.render's names, the manifest's): the
    # report test finds each drawn on the paper's page, and no table in a chart's place
    figures: tuple[str, ...] = ()
    # the most samples per group a capture of this lab can give the paper's claims, where
    # fewer than papers.coverage.BUDGET runs (its reason in max_n_reason): a plan beyond is
    # undecidable here
    max_n: int | None = None
    max_n_reason: str = ""

    @property
    def folder(self) -> Path:
        return ROOT / self.id

    @property
    def campaign_file(self) -> Path:
        return self.folder / "campaign.yaml"

    @property
    def profiles_file(self) -> Path:
        return self.folder / "profiles.yaml"

    @property
    def inventory_file(self) -> Path:
        return self.folder / "inventory.yaml"

    @property
    def notebook_file(self) -> Path:
        return self.folder / "notebook.py"

    def module(self, name: str) -> ModuleType:
        """``papers.<id>.<name>`` (claims, synthetic)."""
        return importlib.import_module(f"papers.{self.id}.{name}")


PAPERS: dict[str, Paper] = {p.id: p for p in (
    Paper("chen", "Chen et al., IMC 2013: MPTCP over WiFi and 3G/4G",
          "Chen et al., IMC 2013", "chen-imc2013-mptcp-wireless.txt",
          figures=("download_time", "cellular_share", "rtt_ccdf", "ofo_ccdf", "table6_ofo_rtt", "claims",
                   "single_path_loss_rtt")),
    Paper("cs244", "CS244 reproduction of Raiciu et al. (NSDI'12) Fig. 9",
          "CS244 (Lim & Valdez) / Raiciu et al., NSDI 2012", "cs244-mptcp-wireless-reproduction.txt",
          figures=("throughput_vs_buffer", "claims", "handover", "handover3")),
    Paper("deng", "Deng et al., IMC 2014: WiFi, LTE, or both?",
          "Deng et al., IMC 2014", "deng-imc2014-wifi-lte-or-both.txt",
          figures=("tcp_vs_mptcp_per_size", "primary_rel_diff_cdf", "throughput_over_time",
                   "cc_and_network_rel_diff_cdf", "backup_mode", "claims"),
          max_n=10, max_n_reason="Deng's medians are over locations (each location's median over its runs), and the "
          "lab emulates 10 locations (papers/deng/profiles.yaml): more runs do not give a location median more samples"),
    Paper("ditg", "MPTCP latency for cloud applications (D-ITG over Dummynet)",
          "the D-ITG cloud-latency study", "mptcp-cloud-latency-ditg.txt",
          figures=("fig3_equal_rtt", "fig4_asymmetric_rtt", "fig5_10_vs_100_mbit", "fig6_8_loss",
                   "offered_load", "claims")),
    Paper("ferlin", "Ferlin et al.: multi-path transport over heterogeneous wireless (DRePaS)",
          "Ferlin et al. (DRePaS)", "ferlin-drepas-heterogeneous.txt",
          figures=("goodput_vs_tcp", "completion_time_cdf_2g_wlan", "completion_time_cdf_3g_wlan",
                   "completion_time_cdf_2g_3g", "relative_contribution", "throughput_trace_2g_wlan", "claims")),
)}

