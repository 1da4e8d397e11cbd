"""The per-op-kind profiler: complete shares, exclusive nesting, wrappers removed."""

import numpy as np
import pytest

pytest.importorskip('torch')  # benchmarks.runner builds PyTorch's side too

from benchmarks import profile  # noqa: E402
from minidl import Function, Tensor, layers, losses, models, optimizers  # noqa: E402
from minidl.functions.conv import Conv2D  # noqa: E402
from minidl.functions.normalization import BatchNorm  # noqa: E402
from minidl.optimizers import Optimizer  # noqa: E402


def _tiny_train_step():
    model = models.Sequential([
        layers.Input((6, 6, 2)), layers.Conv2D(3, 3), layers.BatchNormalization(),
        layers.Flatten(), layers.Dense(4)])
    model.compile(optimizer=optimizers.SGD(learning_rate=0.01, momentum=0.9),
                  loss=losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6, 6, 2), dtype=np.float32)
    y = rng.integers(0, 4, size=8)
    return lambda: model.train_on_batch(x, y)


def test_shares_of_a_training_step_are_complete():
    result = profile.profile_step(_tiny_train_step(), steps=3, warmup=1)
    rows = profile.shares(result['ms'], result['step_ms'])
    kinds = {kind: ms for kind, ms, _ in rows}
    assert sum(share for _, _, share in rows) == pytest.approx(100, abs=0.01)
    assert kinds['other'] >= 0
    for kind in ('conv forward', 'conv backward', 'normalization forward',
                 'normalization backward', 'optimizer'):
        assert kinds[kind] > 0, kind


class _FakeClock:
    """perf_counter's stand-in: time moves only when the code under test says so."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


_clock = _FakeClock()


class _Inner(Function):
    def forward(self, x):
        _clock.now += 3
        return x * 2


class _Outer(Function):
    def forward(self, x):
        _clock.now += 2
        return _Inner()(Tensor(x)).data + 1


def test_nested_op_time_is_counted_once(monkeypatch):
    monkeypatch.setattr(profile, 'perf_counter', _clock)

    def step():
        _clock.now += 1  # outside any op: 'other'
        _Outer()(Tensor(np.ones(2, np.float32)))

    result = profile.profile_step(step, steps=2)
    # Per step: outer 2 s + inner 3 s exclusive (one kind, not 2 + 3 + 3), 1 s other.
    assert result['ms'] == {f'{profile.op_kind(_Outer)} forward': 5000.0, 'other': 1000.0}
    assert result['step_ms'] == 6000.0


def test_original_methods_are_back_afterwards():
    originals = {(cls, name): vars(cls)[name] for cls, name in
                 [(Conv2D, 'forward'), (Conv2D, 'backward'), (BatchNorm, 'forward'),
                  (BatchNorm, 'backward'), (Optimizer, 'apply_gradients')]}
    with pytest.raises(RuntimeError, match='inside'):
        with profile.profiled():
            for (cls, name), method in originals.items():
                assert vars(cls)[name] is not method, f'{cls.__name__}.{name} not wrapped'
            raise RuntimeError('inside the profile')
    profile.profile_step(_tiny_train_step(), steps=1)
    for (cls, name), method in originals.items():
        assert vars(cls)[name] is method, f'{cls.__name__}.{name} still wrapped'
