import sys
from pathlib import Path

# tests/ holds helpers (pcapgen) imported by several test modules.
sys.path.insert(0, str(Path(__file__).parent))
