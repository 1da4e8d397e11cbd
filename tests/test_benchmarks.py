"""The benchmark CLI builds every workload in both frameworks and prints parseable lines."""

import json

import pytest

torch = pytest.importorskip('torch')

from benchmarks import workloads  # noqa: E402
from benchmarks.__main__ import main  # noqa: E402
from benchmarks.runner import minidl_steps, torch_steps  # noqa: E402

# Parameter counts worked out by hand from BENCHMARKS.md's layer lists.
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
}


@pytest.mark.parametrize('workload_id', sorted(HAND_COUNTS))
def test_builds_have_the_specified_parameter_counts(workload_id):
    workload = workloads.load(workload_id)
    x, y = workload.data()
    torch_count, minidl_count = HAND_COUNTS[workload_id]
    assert workload.PARAMS == torch_count and workload.MINIDL_PARAMS == minidl_count
    assert torch_steps(workload, x, y, 'cpu')[1] == torch_count
    assert minidl_steps(workload, x, y, 'cpu')[1] == minidl_count


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
