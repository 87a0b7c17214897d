"""Test-only accelerator backends (see jitamptest.py)."""
