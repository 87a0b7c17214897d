"""`python tools/jitamp_fuzz ARGS` (or, with tools/ on PYTHONPATH,
`python -m jitamp_fuzz ARGS`)."""
import os
import sys

if not __package__:  # run as a folder: import it as the package jitamp_fuzz
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    sys.path.insert(0, os.path.dirname(here))

from jitamp_fuzz.cli import main  # noqa: E402

sys.exit(main())
