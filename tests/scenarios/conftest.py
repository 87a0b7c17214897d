import pytest

import oracle


@pytest.fixture(autouse=True)
def _isolate_autocast_state():
    """A scenario that leaks autocast state (a bug the oracle reports in that
    test) must not make the following tests fail too."""
    oracle.reset_autocast_state()
    yield
    oracle.reset_autocast_state()
