"""The report a reader opens (``results/report/index.html``): the paper notebooks executed
against the lab's database (``execute``), exported to pages that work offline
(``notebook_html``), the index page linking every figure, notebook and verdict
(``page``, from the template ``index.html.j2`` beside it), and the main job's closing
summary (``summary``). It sits on top: it reads the papers, the findings and the figures."""
