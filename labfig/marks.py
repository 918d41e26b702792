"""Mark idioms the paper figures share, written once."""
from __future__ import annotations

import altair as alt


def halo_text(data, enc: dict, halo: float = 3, text_enc: dict | None = None, **kw) -> alt.LayerChart:
    """Text with a white halo, readable over the lines and dots it crosses: ``enc`` encodes
    both layers, ``text_enc`` (e.g. a colour) only the text; ``kw``: mark_text options."""
    base = alt.Chart(data)
    return alt.layer(base.mark_text(stroke="white", strokeWidth=halo, strokeJoin="round", **kw).encode(**enc),
                     base.mark_text(**kw).encode(**enc, **(text_enc or {})))
