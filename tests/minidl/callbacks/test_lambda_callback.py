import pytest

from minidl.callbacks import CallbackList, LambdaCallback
from tests.minidl.callbacks.fakes import FakeModel, fit


def test_given_functions_run_at_their_hooks():
    calls = []
    callback = LambdaCallback(
        on_train_begin=lambda logs: calls.append('train_begin'),
        on_epoch_begin=lambda epoch, logs: calls.append(('epoch_begin', epoch)),
        on_batch_begin=lambda batch, logs: calls.append(('batch_begin', batch)),
        on_batch_end=lambda batch, logs: calls.append(('batch_end', batch, logs['loss'])),
        on_epoch_end=lambda epoch, logs: calls.append(('epoch_end', epoch, logs['loss'])),
        on_train_end=lambda logs: calls.append('train_end'))
    fit(FakeModel(), [callback], [{'loss': 0.5}], steps=2)
    assert calls == ['train_begin', ('epoch_begin', 0), ('batch_begin', 0),
                     ('batch_end', 0, 0.5), ('batch_begin', 1), ('batch_end', 1, 0.5),
                     ('epoch_end', 0, 0.5), 'train_end']


def test_other_hooks_by_keyword_and_the_rest_do_nothing():
    calls = []
    callback = LambdaCallback(on_test_end=lambda logs: calls.append(logs),
                              on_predict_batch_end=lambda batch, logs: calls.append(batch))
    callbacks = CallbackList([callback], model=FakeModel())
    callbacks.on_test_end({'loss': 2.0})
    callbacks.on_predict_batch_end(3, {'outputs': []})
    callbacks.on_epoch_end(0, {'loss': 1.0})
    callbacks.on_train_batch_end(0, {'loss': 1.0})
    assert calls == [{'loss': 2.0}, 3]


def test_unknown_hooks_and_non_callables_are_type_errors():
    with pytest.raises(TypeError, match='on_epoch_ends is not a callback hook'):
        LambdaCallback(on_epoch_ends=print)
    with pytest.raises(TypeError, match='on_epoch_end must be callable'):
        LambdaCallback(on_epoch_end='print')
