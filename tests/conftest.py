import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))
warnings.filterwarnings("ignore", message=r".*torch\.jit\..* is deprecated", category=DeprecationWarning)
