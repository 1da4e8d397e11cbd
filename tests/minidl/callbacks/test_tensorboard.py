"""TensorBoard writes event files that an independent reader (and TensorBoard) decodes."""

import re
import socket
import struct

import numpy as np
import pytest

import minidl
from minidl.callbacks import Callback, LearningRateScheduler, TensorBoard, event_file
from minidl.layers import Dense
from minidl.models import Sequential
from tests.minidl.callbacks.fakes import FakeModel, fit


# ----- an independent reader: CRC-32C bit by bit, TFRecord framing, protobuf ------------

def crc32c_bitwise(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(crc):
    # TFRecord's documented mask: ((crc >> 15) | (crc << 17)) + 0xa282ead8, mod 2**32.
    return ((crc >> 15 | crc << 17) + 0xA282EAD8) % 2 ** 32


def read_records(path):
    data, records, offset = path.read_bytes(), [], 0
    while offset < len(data):
        header = data[offset:offset + 8]
        (length,), (length_crc,) = struct.unpack('<Q', header), \
            struct.unpack('<I', data[offset + 8:offset + 12])
        assert length_crc == masked(crc32c_bitwise(header))
        payload = data[offset + 12:offset + 12 + length]
        (payload_crc,) = struct.unpack('<I', data[offset + 12 + length:offset + 16 + length])
        assert payload_crc == masked(crc32c_bitwise(payload))
        records.append(payload)
        offset += 16 + length
    assert offset == len(data)
    return records


def read_varint(data, offset):
    value = shift = 0
    while True:
        byte = data[offset]
        value |= (byte & 0x7F) << shift
        offset, shift = offset + 1, shift + 7
        if not byte & 0x80:
            return value, offset


def decode(message):
    """{field number: [raw values]}: ints, 8- or 4-byte strings, or bytes."""
    fields, offset = {}, 0
    while offset < len(message):
        key, offset = read_varint(message, offset)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, offset = read_varint(message, offset)
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            value, offset = message[offset:offset + size], offset + size
        else:
            assert wire_type == 2, wire_type
            size, offset = read_varint(message, offset)
            value, offset = message[offset:offset + size], offset + size
        fields.setdefault(field, []).append(value)
    return fields


def read_events(path):
    """[(step, {tag: float or histogram dict})] after checking the file_version event."""
    records = read_records(path)
    first = decode(records[0])
    assert first[3] == [b'brain.Event:2'] and 5 not in first
    events = []
    for record in records[1:]:
        fields = decode(record)
        assert struct.unpack('<d', fields[1][0])[0] > 1.5e9  # a wall time in seconds
        values = {}
        for value in decode(fields[5][0])[1]:
            value = decode(value)
            tag = value[1][0].decode()
            if 2 in value:
                values[tag] = struct.unpack('<f', value[2][0])[0]
            else:
                histo = decode(value[5][0])
                values[tag] = {name: struct.unpack('<d', histo[number][0])[0] for number, name in
                               enumerate(('min', 'max', 'num', 'sum', 'sum_squares'), 1)}
                for number, name in ((6, 'bucket_limit'), (7, 'bucket')):
                    values[tag][name] = np.frombuffer(histo[number][0], '<f8')
        events.append((fields[2][0] if 2 in fields else 0, values))
    return events


def event_files(directory):
    return sorted(directory.glob('events.out.tfevents.*'))


# ----- a small real model ---------------------------------------------------------------

def train(callbacks, epochs=3):
    minidl.set_seed(3)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 4)).astype('float32')
    y = (x.sum(axis=1, keepdims=True) > 0).astype('float32')
    model = Sequential([Dense(3, activation='relu', input_shape=(4,), name='hidden'),
                        Dense(1, activation='sigmoid', name='out')])
    model.compile('sgd', 'binary_crossentropy', metrics=['acc'])
    history = model.fit(x, y, batch_size=8, epochs=epochs, validation_split=0.25, verbose=0,
                        callbacks=callbacks)
    return model, history.history


class KeepWeights(Callback):
    """Copies of the weights at the end of each epoch, by name."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append({w.name: np.array(w.data, dtype=np.float64) for w in self.model.weights})


def test_crc32c_matches_the_check_value_and_a_bitwise_computation():
    assert event_file.crc32c(b'123456789') == 0xE3069283
    rng = np.random.default_rng(1)
    for size in (0, 1, 7, 100):
        data = rng.integers(0, 256, size).astype(np.uint8).tobytes()
        assert event_file.crc32c(data) == crc32c_bitwise(data)
        assert event_file.masked_crc32c(data) == masked(crc32c_bitwise(data))


def test_epoch_scalars_equal_the_history(tmp_path):
    schedule = LearningRateScheduler(lambda epoch: 0.1 / (epoch + 1))
    _, history = train([schedule, TensorBoard(tmp_path / 'logs')])
    (path,) = event_files(tmp_path / 'logs')
    assert re.fullmatch(rf'events\.out\.tfevents\.\d{{10}}\.{re.escape(socket.gethostname())}',
                        path.name)
    events = read_events(path)
    assert set(history) == {'loss', 'acc', 'val_loss', 'val_acc', 'lr'}
    assert [step for step, _ in events] == [0, 1, 2]
    for epoch, (_, values) in enumerate(events):
        assert values == {name: np.float32(curve[epoch]) for name, curve in history.items()}


def test_batch_updates_write_the_running_logs_at_the_batch_count(tmp_path):
    # 15 training samples in batches of 8: 2 batches an epoch.
    _, history = train([TensorBoard(tmp_path / 'batch', update_freq='batch')], epochs=2)
    events = read_events(event_files(tmp_path / 'batch')[0])
    assert [step for step, _ in events] == [1, 2, 2, 3, 4, 4]
    assert set(events[0][1]) == {'loss', 'acc'}
    # The last batch's running mean is the epoch's value; the epoch event adds val_*.
    for epoch, index in ((0, 2), (1, 5)):
        assert events[index - 1][1]['loss'] == events[index][1]['loss'] == \
            np.float32(history['loss'][epoch])
        assert events[index][1]['val_loss'] == np.float32(history['val_loss'][epoch])

    train([TensorBoard(tmp_path / 'every3', update_freq=3)], epochs=3)
    events = read_events(event_files(tmp_path / 'every3')[0])
    assert [(step, 'val_loss' in values) for step, values in events] == [
        (2, True), (3, False), (4, True), (6, False), (6, True)]


def test_weight_histograms_every_histogram_freq_epochs(tmp_path):
    keep = KeepWeights()
    train([keep, TensorBoard(tmp_path, histogram_freq=2)])
    seen = keep.seen
    events = read_events(event_files(tmp_path)[0])
    histograms = [(step, values) for step, values in events if 'loss' not in values]
    tags = ['hidden/kernel_0', 'hidden/bias_0', 'out/kernel_0', 'out/bias_0']
    assert [(step, list(values)) for step, values in histograms] == \
        [(0, [tag]) for tag in tags] + [(2, [tag]) for tag in tags]
    for step, values in histograms:
        (tag, histo), = values.items()
        weight = seen[step][tag.replace('_0', ':0')]
        counts, edges = np.histogram(weight, bins=30)
        assert histo['num'] == weight.size and histo['bucket'].sum() == weight.size
        np.testing.assert_array_equal(histo['bucket'], counts)
        np.testing.assert_allclose(histo['bucket_limit'], edges[1:])
        assert (histo['min'], histo['max']) == (edges[0], edges[-1])
        np.testing.assert_allclose([histo['sum'], histo['sum_squares']],
                                   [weight.sum(), (weight ** 2).sum()], rtol=1e-12)


def test_constant_and_non_finite_weights_still_get_a_histogram():
    histo = decode(decode(decode(event_file.histogram_summary(
        'w', np.array([2.0, 2.0, np.nan, np.inf])))[1][0])[5][0])
    minimum, maximum, num = (struct.unpack('<d', histo[field][0])[0] for field in (1, 2, 3))
    assert (minimum, maximum, num) == (1.5, 2.5, 2.0)


def test_each_fit_gets_its_own_file_and_only_the_chief_writes(tmp_path):
    callback = TensorBoard(tmp_path / 'chief')
    fit(FakeModel(), [callback], [{'loss': 1.0}])
    fit(FakeModel(), [callback], [{'loss': 0.5}], initial_epoch=1)
    files = event_files(tmp_path / 'chief')
    assert len(files) == 2
    assert [read_events(path) for path in files] == [[(0, {'loss': 1.0})], [(1, {'loss': 0.5})]]
    fit(FakeModel(is_chief=False), [TensorBoard(tmp_path / 'worker')], [{'loss': 1.0}])
    assert not (tmp_path / 'worker').exists()


def test_non_numbers_and_batch_bookkeeping_are_not_scalars(tmp_path):
    fit(FakeModel(), [TensorBoard(tmp_path)],
        [{'loss': np.float32(0.25), 'size': 8, 'batch': 1, 'note': 'text', 'lr': np.array(0.5)}])
    assert read_events(event_files(tmp_path)[0]) == [(0, {'loss': 0.25, 'lr': 0.5})]


def test_options_that_are_not_implemented_or_invalid_are_refused(tmp_path):
    with pytest.raises(NotImplementedError, match='write_grads'):
        TensorBoard(histogram_freq=1, write_grads=True)
    with pytest.raises(NotImplementedError, match='write_images'):
        TensorBoard(histogram_freq=1, write_images=True)
    with pytest.raises(NotImplementedError, match='embeddings'):
        TensorBoard(embeddings_freq=1, embeddings_data=np.zeros((2, 3)))
    for update_freq in ('step', 0, 1.5, True):
        with pytest.raises(ValueError, match='update_freq'):
            TensorBoard(update_freq=update_freq)
    with pytest.raises(ValueError, match='histogram_freq'):
        TensorBoard(histogram_freq=-1)
    # Keras 2 makes gradient and image summaries only with histograms: without, nothing to refuse.
    TensorBoard(write_graph=False, write_grads=True, write_images=True, batch_size=8,
                embeddings_layer_names=['x'], embeddings_metadata='meta.tsv')


def test_tensorboard_reads_the_scalars_and_histograms(tmp_path):
    accumulator = pytest.importorskip('tensorboard.backend.event_processing.event_accumulator')
    _, history = train([TensorBoard(tmp_path, histogram_freq=1)])
    reader = accumulator.EventAccumulator(str(tmp_path), size_guidance={
        accumulator.SCALARS: 0, accumulator.HISTOGRAMS: 0})
    reader.Reload()
    assert set(reader.Tags()['scalars']) == set(history)
    for name, curve in history.items():
        events = reader.Scalars(name)
        assert [event.step for event in events] == [0, 1, 2]
        np.testing.assert_array_equal([event.value for event in events],
                                      np.float32(curve))
    kernel = reader.Histograms('hidden/kernel_0')
    assert [event.step for event in kernel] == [0, 1, 2]
    assert kernel[-1].histogram_value.num == 12
