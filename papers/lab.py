"""What every paper notebook's first cell does: open the lab (``labfig.open_lab``) on the
notebook's database, figure folder and findings folder, given explicitly as the
notebook's parameters. Run outside the workflow (no findings folder), the paper's
findings are computed here from the same database, so the notebook still draws the
findings' own numbers."""
from __future__ import annotations

from pathlib import Path

from labfig.session import Lab, open_lab
from labfig.verdicts import FILES

from .judge import findings


def open_paper(paper: str, db: str | Path, figures: str | Path, findings_dir: str | Path | None = None) -> Lab:
    have = findings_dir is not None and all((Path(findings_dir) / f).is_file() for f in FILES)
    return open_lab(paper, db, figures, findings_dir if have else None,
                    tables=None if have else findings(str(db), paper=paper))
