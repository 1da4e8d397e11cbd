"""Every test starts and ends with no global policy, whatever it sets."""

import pytest

from minidl import mixed_precision


@pytest.fixture(autouse=True)
def no_global_policy():
    mixed_precision.set_global_policy(None)
    yield
    mixed_precision.set_global_policy(None)
