import gc
import os
import sys

from . import inputs

# The pcaps the command names are decoded while the rest is imported (see inputs).
inputs.start(sys.argv[1:])

# The imports (polars, ours) make ~10^5 objects and no garbage, yet trigger dozens of
# collections (~11 ms of a ~0.5 s call): collect none during them, and keep what they
# made out of every later collection.
gc.disable()
from .cli import main  # noqa: E402

gc.freeze()
gc.enable()

rc = main()
from .spill import close_kept  # noqa: E402 - a streamed capture's spill, read until its tables were stored

close_kept()
# Everything is written (the database renamed into place and fsynced): skip the
# interpreter's teardown, which frees every frame and module one by one (~50 ms after
# a 280k-packet capture, a tenth of the whole call).
sys.stdout.flush()
sys.stderr.flush()
os._exit(rc)
