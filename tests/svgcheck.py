"""Charts' SVGs as Chromium draws them (issue 42): the text that runs past its image's
edge (the image cuts it) and the labels that data marks are drawn over (a point, line,
rule or bar after the label in the SVG, painted where the label's letters are: "paper:
> 2?% wait"). The SVGs are put inline in one page, a script measures them, and headless
Chromium's DOM dump carries the answer."""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

_SCRIPT = """<pre id="out">pending</pre><script>
const res = {cut: [], covered: []};
// what Vega draws for data: points, lines, rules (bands, intervals), bars and areas
const DATA = ".role-mark.mark-symbol path, .role-mark.mark-line path, .role-mark.mark-rule line, " +
             ".role-mark.mark-rect path, .role-mark.mark-area path, .role-mark.mark-trail path";
function visible(m, what) {  // painted, and opaque enough to hide a letter
  const cs = getComputedStyle(m);
  if (cs[what] === "none" || cs.visibility === "hidden") return false;
  return parseFloat(cs.opacity) * parseFloat(what === "fill" ? cs.fillOpacity : cs.strokeOpacity) >= 0.3;
}
function paints(m, r) {  // m paints somewhere inside the client rectangle r
  const b = m.getBoundingClientRect();
  if (b.right < r.left || b.left > r.right || b.bottom < r.top || b.top > r.bottom) return false;
  const inv = m.getScreenCTM().inverse(), svg = m.ownerSVGElement, fill = visible(m, "fill"),
        stroke = visible(m, "stroke");
  for (let i = 1; i < 8; i++) for (let j = 1; j < 4; j++) {
    const p = svg.createSVGPoint();
    p.x = r.left + (r.width * i) / 8; p.y = r.top + (r.height * j) / 4;
    const q = p.matrixTransform(inv);
    if ((fill && m.isPointInFill(q)) || (stroke && m.isPointInStroke(q))) return true;
  }
  return false;
}
document.querySelectorAll("svg[data-name]").forEach(svg => {
  const name = svg.dataset.name, box = svg.getBoundingClientRect();
  const data = [...svg.querySelectorAll(DATA)];
  svg.querySelectorAll("text").forEach(t => {
    const r = t.getBoundingClientRect(), words = t.textContent.trim();
    if (!(r.width > 0) || !words) return;
    if (r.right > box.right + 0.5 || r.left < box.left - 0.5 || r.bottom > box.bottom + 0.5 || r.top < box.top - 0.5)
      res.cut.push(name + ": " + words);
    if (!t.closest(".role-mark.mark-text") || t.getAttribute("stroke") === "white") return;  // a label's halo
    for (const m of data)
      if ((t.compareDocumentPosition(m) & Node.DOCUMENT_POSITION_FOLLOWING) && paints(m, r)) {
        res.covered.push(name + ": " + words); break;
      }
  });
});
document.getElementById("out").textContent = JSON.stringify(res);
</script>"""


def measure(svgs: dict[str, str], tmp: Path) -> dict[str, list[str]]:
    """{"cut": [...], "covered": [...]}, each entry "<name>: <text>", for the SVG documents
    ``svgs`` (name -> the file's text) drawn by headless Chromium."""
    inline = []
    for name, svg in svgs.items():
        body = svg[svg.index("<svg"):]
        inline.append(body.replace("<svg", f'<svg data-name="{html.escape(name)}"', 1))
    page = tmp / "svgcheck.html"
    page.write_text("<!doctype html><meta charset=utf-8><body>" + "\n".join(inline) + _SCRIPT + "</body>")
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", f"--user-data-dir={tmp / 'svgcheck-profile'}",
                        "--window-size=2400,3000", "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C.UTF-8"})
    out = re.search(r'<pre id="out">(.*?)</pre>', r.stdout, re.S)
    assert out and out.group(1) != "pending", f"the measuring script did not run: {r.stderr[-2000:]}"
    return json.loads(html.unescape(out.group(1)))
