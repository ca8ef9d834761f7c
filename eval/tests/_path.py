"""Makes eval/ importable for `python3 -m unittest discover -s eval/tests`."""

import pathlib
import sys

EVAL = pathlib.Path(__file__).resolve().parents[1]
if str(EVAL) not in sys.path:
    sys.path.insert(0, str(EVAL))
