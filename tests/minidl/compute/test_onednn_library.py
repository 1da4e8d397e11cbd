"""How minidl loads oneDNN's OpenMP runtime: the spin count it sets, and the user's kept."""

import os

from minidl.compute.onednn import library


def test_libgomp_loads_with_minidls_spin_count_which_is_then_removed(monkeypatch):
    monkeypatch.delenv('GOMP_SPINCOUNT', raising=False)
    monkeypatch.delenv('OMP_WAIT_POLICY', raising=False)
    with library._spin_count():
        assert os.environ['GOMP_SPINCOUNT'] == str(library.SPIN_COUNT)
    assert 'GOMP_SPINCOUNT' not in os.environ


def test_a_spin_count_or_wait_policy_the_user_set_is_kept(monkeypatch):
    for variable, value in [('GOMP_SPINCOUNT', '5'), ('OMP_WAIT_POLICY', 'passive')]:
        with monkeypatch.context() as patch:
            patch.delenv('GOMP_SPINCOUNT', raising=False)
            patch.delenv('OMP_WAIT_POLICY', raising=False)
            patch.setenv(variable, value)
            with library._spin_count():
                assert os.environ[variable] == value
                assert ('GOMP_SPINCOUNT' in os.environ) == (variable == 'GOMP_SPINCOUNT')
            assert os.environ[variable] == value
