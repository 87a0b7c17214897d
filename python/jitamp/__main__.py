"""`python -m jitamp` (also installed as the `jitamp` command)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
