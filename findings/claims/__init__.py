"""Every paper's claims (and the lab checks), one module per paper."""
from . import chen, cs244, deng, ditg, ferlin

MODULES = (chen, cs244, deng, ditg, ferlin)
PAPERS = tuple(m.P for m in MODULES)
CLAIMS = [c for m in MODULES for c in m.CLAIMS]
CHECKS = [c for m in MODULES for c in m.CHECKS]
ALL = CLAIMS + CHECKS
