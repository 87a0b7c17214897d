import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(__file__))
# the differential fuzzer, a developer tool that is not shipped: tools/jitamp_fuzz
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))

from oracle import TORCHSCRIPT_DEPRECATION  # noqa: E402

# TorchScript's deprecation warning at import time (e.g. of @torch.jit.script
# helpers); pyproject's filterwarnings covers it while tests run.
for _category in (DeprecationWarning, FutureWarning):
    warnings.filterwarnings("ignore", message=TORCHSCRIPT_DEPRECATION, category=_category)


# JITAMP_TEST_LOG=PATH: one line per test as it ends (outcome, seconds,
# node id; a failure's last lines of report after it), written by the
# process that reports (xdist's controller), so that a suite stopped at a
# time limit (a lent GPU's lease: scripts/gpu_checks.sh) still says what
# failed and what took the time.
_TEST_LOG = os.environ.get("JITAMP_TEST_LOG")


def pytest_runtest_logreport(report):
    if not _TEST_LOG or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if report.when != "call" and not (report.failed or report.skipped):
        return
    lines = [f"{report.outcome}\t{report.duration:.2f}\t{report.nodeid}"]
    if report.failed:
        lines += ["\t" + line for line in str(report.longrepr).splitlines()[-15:]]
    with open(_TEST_LOG, "a") as log:
        log.write("\n".join(lines) + "\n")
