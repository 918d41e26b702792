"""An executed notebook as one HTML page that works offline.

    python -m report.notebook_html results/notebooks/chen.executed.ipynb --out results/report/notebooks/chen.html

nbconvert's pages load require.js, MathJax and (in every Altair chart's cell) Vega,
Vega-Lite and Vega-Embed from CDNs; the lab is offline by nature, so every chart showed
"Error loading script". Here the page carries the Vega-Embed bundle that vl-convert
(an installed dependency) ships for the Vega-Lite version Altair writes, and announces
it through Altair's own hook (``VEGA_DEBUG``: a chart's loader skips a library whose
version is already there), so no chart loads anything; the CDN scripts are left out.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def vega_head() -> str:
    """<script> tags defining vega, vegaLite and vegaEmbed, and Altair's VEGA_DEBUG
    versions so the charts' loaders use them instead of fetching their own."""
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert
    from altair.vegalite.v6.display import VEGA_VERSION, VEGAEMBED_VERSION, VEGALITE_VERSION

    bundle = vlc.javascript_bundle(vl_version=vl_version_for_vl_convert())
    # the loader's keys: `${lib.replace("-", "")}_version` (altair/utils/html.py, universal template)
    versions = {"vega_version": VEGA_VERSION, "vegalite_version": VEGALITE_VERSION,
                "vegaembed_version": VEGAEMBED_VERSION}
    # "</script" inside the bundle would end the tag early
    bundle = bundle.replace("</script", "<\\/script")
    return (f"<script>\n{bundle}\n</script>\n"
            f"<script>var VEGA_DEBUG = Object.assign(typeof VEGA_DEBUG == 'undefined' ? {{}} : VEGA_DEBUG, "
            f"{json.dumps(versions)});</script>")


def to_html(notebook: Path, code: bool = False) -> str:
    """The page; without ``code`` a reader sees the text, tables and figures only (the
    code is the notebook's, papers/<paper>/notebook.py)."""
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    cfg = Config()
    cfg.TemplateExporter.extra_template_basedirs = [str(Path(__file__).parent / "nbtemplates")]
    cfg.TemplateExporter.exclude_input = not code
    cfg.TemplateExporter.exclude_input_prompt = not code
    cfg.TemplateExporter.exclude_output_prompt = not code
    exporter = HTMLExporter(config=cfg, template_name="offline")
    nb = nbformat.read(str(notebook), as_version=4)
    body, _ = exporter.from_notebook_node(nb, resources={"offline_head": vega_head()})
    return body


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m report.notebook_html", description=__doc__.splitlines()[0])
    ap.add_argument("notebook", type=Path, help="an executed .ipynb")
    ap.add_argument("--out", type=Path, required=True, help="the HTML page to write (atomically)")
    ap.add_argument("--code", action="store_true", help="keep the code cells (default: text, tables, figures)")
    a = ap.parse_args(argv)
    try:
        html = to_html(a.notebook, code=a.code)
    except (OSError, ValueError) as e:
        print(f"{a.notebook}: {e}", file=sys.stderr)
        return 1
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_name(f".{a.out.name}.{os.getpid()}.tmp")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
