"""sin and cos: gradient checks and values against numpy."""

import numpy as np
import pytest

from minidl import Tensor
from minidl.functions import trigonometry as F
from tests.gradcases import GradCase, random, run_gradcheck

GRADCHECK_CASES = [
    GradCase(F.Sin, F.sin, [random(3, 4)]),
    GradCase(F.Cos, F.cos, [random(3, 4)]),
]


@pytest.mark.parametrize('case', GRADCHECK_CASES, ids=str)
def test_gradcheck(case):
    run_gradcheck(case)


def test_values_match_numpy():
    x = random(5, low=-4, high=4)
    np.testing.assert_allclose(F.sin(Tensor(x, dtype='float64')).numpy(), np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(F.cos(Tensor(x, dtype='float64')).numpy(), np.cos(x), rtol=1e-12)
