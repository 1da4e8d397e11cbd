"""The distributed lessons run as written (``mpirun -np 2 python -m minidl_dist
tutorials/0N_....py <output directory>``, their quick mode), and as one process; only rank 0
prints and writes."""

import hashlib
import math
import pathlib
import re

import pytest

from minidl.models import load_model
from tests.minidl_dist.launch import launch

# An absolute path takes the place of launch's scripts/ folder (pathlib's `/`).
LESSON_5 = pathlib.Path(__file__).resolve().parents[2] / 'tutorials' / '05_data_parallel.py'
# The quick run measured a held-out accuracy of 0.978 on one rank and 0.983 on two
# (0.969 in the invariant mode); the bound leaves room for other CPUs' rounding,
# and chance is 0.1.
HELD_OUT_ACCURACY = 0.9
TEST_SAMPLES = 360
# evaluate and the numpy recomputation agree to 1e-8 (float32 against float64
# sums); both are printed with 6 decimals. A mean of the ranks' means instead
# of exact sums is off by about 1e-3 in the loss and 5e-4 in the accuracy.
PRINTED_LOSS_TOLERANCE = 2e-6


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """The lesson's output on one and on two ranks, and each run's output directory."""
    pytest.importorskip('sklearn')  # the digits set
    outputs = {}
    for ranks in (1, 2):
        directory = tmp_path_factory.mktemp(f'ranks{ranks}')
        run = launch(LESSON_5, directory, ranks=ranks, timeout=120, launcher=True).check()
        outputs[ranks] = run.stdout, directory
    return outputs


def _one(pattern, text):
    found = re.findall(pattern, text)
    assert len(found) == 1, f'{pattern!r} printed {len(found)} times in\n{text}'
    return found[0]


def _digest(model):
    return hashlib.sha256(b''.join(weight.tobytes() for weight in model.get_weights())).hexdigest()


@pytest.mark.parametrize('ranks', [1, 2])
def test_evaluate_equals_a_numpy_recomputation_from_predict(runs, ranks):
    stdout, _ = runs[ranks]
    loss, accuracy = map(float, _one(r'evaluate over 360 test samples: loss ([\d.]+), '
                                     r'accuracy ([\d.]+)', stdout))
    numpy_loss, numpy_accuracy = map(float, _one(r'numpy, from predict: +loss ([\d.]+), '
                                                 r'accuracy ([\d.]+)', stdout))
    assert abs(loss - numpy_loss) <= PRINTED_LOSS_TOLERANCE
    assert accuracy == numpy_accuracy
    # Exact over the whole data: a count of right answers out of the 360 samples.
    assert abs(accuracy * TEST_SAMPLES - round(accuracy * TEST_SAMPLES)) < 1e-3
    assert accuracy > HELD_OUT_ACCURACY


def test_two_ranks_split_the_global_batch_and_only_rank_0_prints(runs):
    stdout, _ = runs[2]
    assert stdout.count('Epoch 15/15') == 1  # fit's progress, from rank 0 alone
    # Plain: one half each. Invariant: two micro-shards each, the same four as on one rank.
    assert re.findall(r'a global batch of 64 samples on 2 rank\(s\): (.*)\n', stdout) == [
        'part 0 = samples 0:32 on rank 0, part 1 = samples 32:64 on rank 1',
        'part 0 = samples 0:16 on rank 0, part 1 = samples 16:32 on rank 0, '
        'part 2 = samples 32:48 on rank 1, part 3 = samples 48:64 on rank 1']


@pytest.mark.parametrize('ranks', [1, 2])
def test_rank_0_saves_one_file_that_loads_in_one_process(runs, ranks):
    stdout, directory = runs[ranks]
    assert [path.name for path in directory.iterdir()] == ['data_parallel_digits.h5']
    printed = _one(r'plain weights sha256 ([0-9a-f]{64})', stdout)
    assert _digest(load_model(directory / 'data_parallel_digits.h5')) == printed
    same, difference = _one(r'reloaded in one process: same weights (\w+), '
                            r'largest difference of predictions (\S+)', stdout)
    assert same == 'True'
    assert float(difference) < 1e-6


def test_invariant_mode_gives_the_same_weights_on_one_and_two_ranks(runs):
    digests = {ranks: _one(r'invariant weights sha256 ([0-9a-f]{64})', stdout)
               for ranks, (stdout, _) in runs.items()}
    assert digests[1] == digests[2]
    # The same weights evaluate alike whether one rank or two compute the sums.
    evaluations = {ranks: _one(r'evaluate: loss ([\d.]+), accuracy ([\d.]+)', stdout)
                   for ranks, (stdout, _) in runs.items()}
    assert evaluations[1][1] == evaluations[2][1]
    assert abs(float(evaluations[1][0]) - float(evaluations[2][0])) <= PRINTED_LOSS_TOLERANCE
    for stdout, _ in runs.values():  # what the invariant mode costs: printed, not judged
        _one(r'time per epoch on \d rank\(s\): plain [\d.]+ s, invariant [\d.]+ s', stdout)


# ----- lesson 6: hybrid AlexNet --------------------------------------------------------

LESSON_6 = LESSON_5.parent / '06_hybrid_alexnet.py'
# Adam's first step moves every weight by its learning rate, 2e-4, the way its gradient
# points (unless the gradient is below Adam's epsilon): a gradient of the wrong sign for
# any weight shows as a difference of 4e-4. Float32 rounding of the same sums in another
# order leaves a few units in the last place of weights below 0.1 (measured: 5.2e-8, and
# 2.9e-8 on one rank); the bound lies between. (Adam cannot see a gradient wrong only in
# scale: tests/minidl_dist/test_hybrid.py compares the gradients themselves.)
ONE_STEP_DIFFERENCE = 1e-6
# The quick run (24 steps, a top of 2048 units) measured held-out accuracies of 0.62 in
# both modes; chance is 0.1. Rounding, amplified over 24 steps, may change a few of the
# 360 answers.
ALEXNET_ACCURACY = 0.4
ACCURACY_GAP = 0.05


@pytest.fixture(scope='module')
def hybrid_run(tmp_path_factory):
    """The hybrid lesson's output under ``mpirun -np 2``, and its output directory."""
    pytest.importorskip('sklearn')  # the digits set
    pytest.importorskip('h5py')  # save
    directory = tmp_path_factory.mktemp('hybrid')
    return launch(LESSON_6, directory, ranks=2, timeout=300,
                  launcher=True).check().stdout, directory


def test_hybrid_holds_half_of_the_dense_layers_weights_and_adam_state(hybrid_run):
    stdout, _ = hybrid_run
    data_parallel, hybrid = map(int, _one(r'held bytes per rank: data-parallel (\d+), '
                                          r'hybrid (\d+)', stdout))
    total = int(_one(r'Total params: ([\d,]+)', stdout).replace(',', ''))
    # Two model-parallel layers, each line with its columns: 'model-parallel 0:2048/4096'.
    # The quick run's top: 2048 units, half of them on each rank.
    sharded = re.findall(r'\n(fc\d) \(Dense\) +\(None, 2048\) +(\d+) +model-parallel '
                         r'0:1024/2048', stdout)
    assert [name for name, _ in sharded] == ['fc6', 'fc7']
    halved = sum(int(count) for _, count in sharded) // 2
    # float32 weights and Adam's two moments of the same shapes: 3 x 4 bytes per parameter.
    assert data_parallel == 12 * total
    assert hybrid == 12 * (total - halved)
    assert hybrid < data_parallel


def test_hybrid_sends_less_than_data_parallel_at_a_small_batch(hybrid_run):
    stdout, _ = hybrid_run
    sent = {int(batch): (int(data_parallel), int(hybrid)) for batch, data_parallel, hybrid
            in re.findall(r'batch (\d+): bytes sent per step and rank: data-parallel (\d+), '
                          r'hybrid (\d+)', stdout)}
    assert sorted(sent) == [32, 256]
    total = int(_one(r'Total params: ([\d,]+)', stdout).replace(',', ''))
    for data_parallel, _ in sent.values():
        # An allreduce on 2 ranks sends each rank's whole buffer once: every float32
        # gradient, plus the few bytes of fit's metric sums.
        assert 4 * total <= data_parallel < 4 * total + 1024
    assert sent[32][1] < sent[32][0]
    assert sent[32][1] < sent[256][1]  # the activations grow with the batch
    _one(r'they break even at a batch of about \d+', stdout)


def test_hybrid_trains_as_data_parallelism_does(hybrid_run):
    stdout, _ = hybrid_run
    after_one_step, _ = map(float, _one(
        r'largest weight difference, hybrid against data-parallel: (\S+) after one step, '
        r'(\S+) after training', stdout))
    assert after_one_step < ONE_STEP_DIFFERENCE
    accuracies = {name: float(accuracy) for name, accuracy in re.findall(
        r'(data-parallel|hybrid): held-out loss [\d.]+, accuracy ([\d.]+)', stdout)}
    assert len(accuracies) == 2 and min(accuracies.values()) > ALEXNET_ACCURACY
    assert abs(accuracies['hybrid'] - accuracies['data-parallel']) <= ACCURACY_GAP


def test_a_file_saved_on_2_ranks_loads_in_one_process(hybrid_run):
    stdout, directory = hybrid_run
    assert [path.name for path in directory.iterdir()] == ['hybrid_alexnet.h5']
    same, difference = _one(r'reloaded in one process: same weights (\w+), '
                            r'largest difference of predictions (\S+)', stdout)
    assert same == 'True'
    assert float(difference) < 1e-6
    # Keras's layout: the whole fc7 kernel, gathered from both ranks' columns.
    fc7 = load_model(directory / 'hybrid_alexnet.h5').get_layer('fc7')
    assert sorted(weight.shape for weight in fc7.get_weights()) == [(2048,), (2048, 2048)]


def test_hybrid_lesson_shows_progress_once(hybrid_run):
    """A line per phase and fit's line per epoch, from rank 0 alone."""
    stdout, _ = hybrid_run
    for mode in ('data-parallel', 'hybrid'):
        _one(rf'\n{mode}: 1 epoch\(s\) of 24 steps\n24/24 - ', stdout)
    assert stdout.count('24/24 - ') == 2


# ----- lesson 7: model averaging -------------------------------------------------------

LESSON_7 = LESSON_5.parent / '07_model_averaging.py'


def test_model_averaging_sends_less_at_the_same_accuracy(tmp_path):
    pytest.importorskip('sklearn')  # the digits set
    pytest.importorskip('matplotlib')  # the figure
    stdout = launch(LESSON_7, tmp_path, ranks=2, timeout=120, launcher=True).check().stdout
    lines = re.findall(r'\n *(synchronous|averaging, period \d+): +([\d.]+) KiB sent per rank '
                       r'per epoch, held-out loss [\d.]+, accuracy ([\d.]+); all 2 ranks hold '
                       r'the same weights: (\w+)', stdout)
    assert [name for name, *_ in lines] == ['synchronous', 'averaging, period 4',
                                            'averaging, period 16'], stdout
    sent = [float(kib) for _, kib, _, _ in lines]
    # Measured 0.967 for all three: 4 epochs of 23 steps, periods 4 and 16.
    assert min(float(accuracy) for _, _, accuracy, _ in lines) >= 0.9
    assert sent[0] > sent[1] > sent[2]
    assert all(same == 'True' for *_, same in lines)
    assert stdout.count('epoch 4/4: held-out accuracy') == 3  # progress, from rank 0 alone
    assert [path.name for path in tmp_path.iterdir()] == ['model_averaging.png']
    assert (tmp_path / 'model_averaging.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


# ----- lesson 8: many workers, many ways -----------------------------------------------

LESSON_8 = LESSON_5.parent / '08_many_ways.py'
WAYS = ['sync', 'sync + QSGD', 'sync + top-k', 'averaging, period 4', 'async, free',
        'async, seeded', 'stale s=1, free', 'stale s=1, seeded']
STEPS = 24  # ceil(1437 / 60) global batches per epoch
MLP_VALUES = 64 * 128 + 128 + 128 * 10 + 10
TOTALS = 8 * 4  # float64 loss sum and count, accuracy sum and count: summed at every step
# Bytes a rank sends per step on 2 ranks (each rank's buffer crosses to the other once):
# the float32 gradients, plus a float32 flag per weight and the part count summed exactly
# beside compressed ones; QSGD(7 levels) a float32 norm per 512 values and 4 bits per
# value, top-k an int32 index and a float32 value for each of ceil(0.01 * 9610) = 97
# values. The parameter server answers each step with the float32 weights, its worker
# sends the gradients and the float64 sums: the mean of the two. Averaging (period 4)
# sends weights and momentum every 4th step (6 per epoch), the sums at every step.
PER_EPOCH_BYTES = {
    'sync': STEPS * (4 * (MLP_VALUES + 5) + TOTALS),
    'sync + QSGD': STEPS * (4 * 5 + 4 * math.ceil(MLP_VALUES / 512) + MLP_VALUES // 2 + TOTALS),
    'sync + top-k': STEPS * (4 * 5 + 8 * math.ceil(0.01 * MLP_VALUES) + TOTALS),
    'averaging, period 4': 6 * 2 * 4 * MLP_VALUES + STEPS * TOTALS,
    **{way: STEPS * (4 * MLP_VALUES + (4 * MLP_VALUES + TOTALS)) / 2 for way in WAYS[4:]},
}


def test_many_ways_print_their_traffic_and_promises_and_draw(tmp_path):
    pytest.importorskip('sklearn')  # the digits set
    pytest.importorskip('matplotlib')  # the figure
    stdout = launch(LESSON_8, tmp_path, ranks=2, timeout=120, launcher=True).check().stdout
    lines = re.findall(r'(?m)^ *([\w +,=-]+): held-out accuracy ([\d.]+), [\d.]+ s and ([\d.]+) '
                       r'KiB per rank per epoch; one model on all ranks: (\w+); weights '
                       r'([0-9a-f]{16}|differ), second run ([0-9a-f]{16}|differ)$', stdout)
    assert [line[0] for line in lines] == WAYS, stdout
    for way, accuracy, kib, one_model, digest, again in lines:
        assert float(kib) == pytest.approx(PER_EPOCH_BYTES[way] / 1024, abs=0.05), way
        assert one_model == 'True', way
        # On 2 ranks every way replays: the synchronous ones always, the seeded ones by
        # their seed, and the free ones because one worker leaves one order.
        assert digest == again, way
        # 3 epochs: measured 0.92-0.94 (top-k 0.88); chance is 0.1.
        assert float(accuracy) > (0.7 if way == 'sync + top-k' else 0.85), way
    # One worker: free and seeded, asynchronous and stale, are the same run.
    assert len({line[4] for line in lines[4:]}) == 1
    assert len({line[4] for line in lines[:4]}) == 4  # four other trainings
    assert stdout.count('| sync + QSGD | ') == 1  # the table, from rank 0 alone
    assert [path.name for path in tmp_path.iterdir()] == ['many_ways.png']
    assert (tmp_path / 'many_ways.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
