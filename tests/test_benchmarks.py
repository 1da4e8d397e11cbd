"""The benchmark CLI builds every workload in both frameworks and prints parseable lines."""

import json

import pytest

torch = pytest.importorskip('torch')

from benchmarks import workloads  # noqa: E402
from benchmarks.__main__ import main  # noqa: E402
from benchmarks.runner import minidl_steps, torch_steps  # noqa: E402


def _imagenet_resnet(bottleneck, blocks):
    """(PyTorch's, minidl's) parameter counts of a 1,000-class ResNet, from its layer list."""
    convolutions, channels = [(3, 64, 7)], 64  # (in, out, kernel)
    for stage, count in enumerate(blocks):
        width = 64 * 2 ** stage
        out = 4 * width if bottleneck else width
        for block in range(count):
            convolutions += ([(channels, width, 1), (width, width, 3), (width, out, 1)]
                             if bottleneck else [(channels, width, 3), (width, width, 3)])
            if channels != out or (block == 0 and stage > 0):
                convolutions.append((channels, out, 1))  # the projection shortcut
            channels = out
    weights = sum(c * o * k * k for c, o, k in convolutions) + channels * 1000 + 1000
    norm_channels = sum(o for _, o, _ in convolutions)  # a batch norm after each convolution
    return weights + 2 * norm_channels, weights + 4 * norm_channels


# Parameter counts worked out by hand from the workloads' layer lists (Z1-Z3: torchvision's).
_LSTM_W5 = [4 * 256 * (161 + 256), 4 * 256 * (512 + 256)]  # kernels of layers 1, 2
HAND_COUNTS = {  # workload: (PyTorch's count, minidl's count_params())
    'W1': (784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10,) * 2,
    'W2': (6 * 25 + 6 + 16 * 6 * 25 + 16 + 400 * 120 + 120 + 120 * 84 + 84 + 84 * 10 + 10,) * 2,
    # BatchNormalization's moving mean and variance (784 channels) count in Keras.
    'W3': (272_474, 272_474 + 2 * 784),
    'W4': (3 * 64 * 121 + 64 + 64 * 192 * 25 + 192 + 192 * 384 * 9 + 384 + 384 * 256 * 9 + 256
           + 9216 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 10 + 10,) * 2,
    'W5': (2 * sum(_LSTM_W5) + 4 * 2 * 4 * 256 + 512 * 29 + 29,
           2 * sum(_LSTM_W5) + 4 * 4 * 256 + 512 * 29 + 29),
    'W6': (4 * 128 * (32 + 128) + 2 * 4 * 128 + 1290, 4 * 128 * (32 + 128) + 4 * 128 + 1290),
    'Z1': _imagenet_resnet(False, (2, 2, 2, 2)),
    'Z2': _imagenet_resnet(True, (3, 4, 6, 3)),
    'Z3': (3 * 64 * 121 + 64 + 64 * 192 * 25 + 192 + 192 * 384 * 9 + 384 + 384 * 256 * 9 + 256
           + 256 * 256 * 9 + 256 + 9216 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 1000
           + 1000,) * 2,
}
# torchvision's documented counts, which the layer lists above must give.
TORCHVISION_COUNTS = {'Z1': 11_689_512, 'Z2': 25_557_032, 'Z3': 61_100_840}


@pytest.mark.parametrize('workload_id', sorted(HAND_COUNTS))
def test_builds_have_the_specified_parameter_counts(workload_id):
    workload = workloads.load(workload_id)
    x, y = workload.data()
    torch_count, minidl_count = HAND_COUNTS[workload_id]
    assert workload.PARAMS == torch_count and workload.MINIDL_PARAMS == minidl_count
    assert torch_steps(workload, x, y, 'cpu')[1] == torch_count
    assert minidl_steps(workload, x, y, 'cpu')[1] == minidl_count
    assert torch_count == TORCHVISION_COUNTS.get(workload_id, torch_count)


def test_cli_prints_a_line_per_workload_framework_and_mode(tmp_path, capsys):
    out = tmp_path / 'out.jsonl'
    main(['W1', 'w2', 'W6', '--steps', '1', '--warmup', '0', '--json', str(out)])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == [json.loads(line) for line in out.read_text().splitlines()]
    keys = [(r['workload'], r['mode'], r['framework']) for r in printed]
    assert keys == [(w, mode, framework) for w in ('W1', 'W2', 'W6')
                    for mode in ('train', 'inference') for framework in ('torch', 'minidl')]
    for result in printed:
        workload = workloads.load(result['workload'])
        expected = workload.PARAMS if result['framework'] == 'torch' else workload.MINIDL_PARAMS
        assert result['params'] == expected
        assert 0 < result['min_ms'] <= result['median_ms'] <= result['max_ms']
        if result['framework'] == 'minidl':
            torch_line = printed[printed.index(result) - 1]
            assert result['ratio'] == pytest.approx(result['median_ms'] / torch_line['median_ms'])
            assert result['target'] == workloads.TARGETS[result['workload']]


def test_cli_rejects_an_unknown_workload():
    with pytest.raises(SystemExit):
        main(['W9'])


def test_sgemm_lines_give_gflops_for_each_thread_count(capsys):
    main(['W0', '--steps', '1', '--warmup', '0'])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r['threads'], r['framework']) for r in printed] == [
        (1, 'torch'), (1, 'minidl'), (2, 'torch'), (2, 'minidl')]
    for result in printed:
        seconds = result['median_ms'] / 1e3
        assert result['gflops_median'] == pytest.approx(2 * 2048 ** 3 / 1e9 / seconds)


def test_flops_are_counted_once_and_rated_for_both_frameworks(capsys):
    main(['W1', '--steps', '1', '--warmup', '0', '--flops'])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # By hand: 2 flop per multiply-add of the three Dense products, 128 rows. Training adds
    # the weight gradients of all three and the input gradients of the last two (the
    # first layer's input needs none).
    forward = 2 * 128 * (784 * 512 + 512 * 512 + 512 * 10)
    backward = forward + 2 * 128 * (512 * 512 + 512 * 10)
    expected = {'inference': forward, 'train': forward + backward}
    for result in printed:
        assert result['flop_per_step'] == expected[result['mode']]
        seconds = result['median_ms'] / 1e3
        assert result['tflops'] == pytest.approx(result['flop_per_step'] / seconds / 1e12)
