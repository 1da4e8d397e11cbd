"""Convolution algorithm choice (deterministic only) and the plan cache keys."""

import ctypes

import pytest

from minidl import config
from minidl.compute.cuda.cudnn import constants
from minidl.compute.cuda.cudnn.algorithms import AlgorithmPerformance, choose
from minidl.compute.cuda.cudnn.handle import cached_plan, plan_key

FMA = constants.FMA_MATH


def result(algo, deterministic=True, status=constants.SUCCESS, math=FMA):
    return AlgorithmPerformance(
        algo=algo, status=status, determinism=constants.DETERMINISTIC if deterministic
        else constants.NON_DETERMINISTIC, mathType=math)


def test_the_first_usable_deterministic_result_is_chosen():
    results = [result(6, deterministic=False), result(2, status=3), result(5), result(1)]
    assert choose('forward', results, FMA, deterministic=True) == (5, True)


def test_without_determinism_the_first_successful_result_is_chosen():
    results = [result(2, status=3), result(6, deterministic=False), result(5)]
    assert choose('forward', results, FMA, deterministic=False) == (6, False)


def test_tensor_core_results_are_skipped_when_the_descriptor_asks_for_fma():
    results = [result(1, math=constants.TENSOR_OP_MATH), result(0)]
    assert choose('forward', results, FMA, deterministic=True) == (0, True)


@pytest.mark.parametrize('direction, algo', [('backward_filter', 0), ('backward_filter', 3),
                                             ('backward_data', 0)])
def test_documented_non_deterministic_algorithms_are_never_chosen(direction, algo):
    # Even when a cuDNN version marks them deterministic.
    chosen, _ = choose(direction, [result(algo)], FMA, deterministic=True)
    assert chosen != algo and chosen == 1


@pytest.mark.parametrize('direction, fallback', [
    ('forward', constants.FWD_ALGO_IMPLICIT_PRECOMP_GEMM),
    ('backward_data', constants.BWD_DATA_ALGO_1),
    ('backward_filter', constants.BWD_FILTER_ALGO_1)])
def test_the_documented_fallback_is_used_when_nothing_qualifies(direction, fallback):
    assert choose(direction, [], FMA, deterministic=True) == (fallback, True)
    assert choose(direction, [result(4, deterministic=False)], FMA, True) == (fallback, True)


def test_the_perf_struct_has_cudnn_layout():
    # int algo, int status, float time, size_t memory, int determinism,
    # int mathType, int reserved[3]: 48 bytes on 64-bit Linux.
    assert AlgorithmPerformance.memory.offset == 16
    assert AlgorithmPerformance.determinism.offset == 24
    assert AlgorithmPerformance.mathType.offset == 28
    assert ctypes.sizeof(AlgorithmPerformance) == 48


def test_plan_keys_separate_what_changes_the_algorithms(monkeypatch):
    monkeypatch.setattr(config, 'deterministic', True)
    monkeypatch.setattr(config, 'allow_tf32', False)
    base = plan_key('conv2d', 0, (8, 32, 32, 3), (3, 3, 3, 16), '<f4')
    assert base == plan_key('conv2d', 0, (8, 32, 32, 3), (3, 3, 3, 16), '<f4')
    different = [plan_key('conv2d', 1, (8, 32, 32, 3), (3, 3, 3, 16), '<f4'),
                 plan_key('conv2d', 0, (4, 32, 32, 3), (3, 3, 3, 16), '<f4'),
                 plan_key('conv2d', 0, (8, 32, 32, 3), (3, 3, 3, 16), '<f8'),
                 plan_key('pool2d', 0, (8, 32, 32, 3), (3, 3, 3, 16), '<f4')]
    monkeypatch.setattr(config, 'deterministic', False)
    different.append(plan_key('conv2d', 0, (8, 32, 32, 3), (3, 3, 3, 16), '<f4'))
    monkeypatch.setattr(config, 'deterministic', True)
    monkeypatch.setattr(config, 'allow_tf32', True)
    different.append(plan_key('conv2d', 0, (8, 32, 32, 3), (3, 3, 3, 16), '<f4'))
    assert len({base, *different}) == 1 + len(different)


def test_a_plan_is_made_once_per_key():
    made = []
    key = plan_key('test-plan', 0, object())
    first = cached_plan(key, lambda: made.append(1) or 'plan')
    second = cached_plan(key, lambda: made.append(1) or 'other')
    assert first == second == 'plan' and made == [1]
