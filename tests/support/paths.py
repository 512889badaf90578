"""Where the tests find the repository and the shared upstream fixtures."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# ../shared beside the repo holds the upstream fixtures and corpus the tests read.
SHARED = Path(os.environ.get("OLM_PY_SHARED", REPO.parent / "shared"))
