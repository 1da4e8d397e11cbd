import pytest

from minidl.callbacks import Callback, CallbackList, History, ProgbarLogger
from minidl.callbacks.base import HOOKS
from tests.minidl.callbacks.fakes import FakeModel, fit


class Recorder(Callback):
    """Records every hook call as (hook, *arguments before logs)."""

    def __init__(self, calls):
        super().__init__()
        self.calls = calls


def _recording_hook(hook):
    return lambda self, *args: self.calls.append((hook,) + args[:-1])


for _hook in HOOKS:
    setattr(Recorder, _hook, _recording_hook(_hook))


def test_base_hooks_are_no_ops_and_train_batch_hooks_call_the_keras_aliases():
    seen = []

    class OldStyle(Callback):
        def on_batch_begin(self, batch, logs=None):
            seen.append(('begin', batch))

        def on_batch_end(self, batch, logs=None):
            seen.append(('end', batch, logs['loss']))

    callback = OldStyle()
    callback.on_train_batch_begin(3, {})
    callback.on_train_batch_end(3, {'loss': 0.5})
    callback.on_test_batch_end(4, {'loss': 0.7})
    for hook in ('on_train_begin', 'on_train_end', 'on_test_begin', 'on_predict_end'):
        assert getattr(Callback(), hook)({}) is None
    assert seen == [('begin', 3), ('end', 3, 0.5)]


def test_set_model_and_set_params():
    model, callback = FakeModel(), Callback()
    callbacks = CallbackList([callback], model=model, verbose=2, epochs=3, steps=7)
    assert callback.model is model and callbacks.model is model
    assert callback.params == {'verbose': 2, 'epochs': 3, 'steps': 7}


def test_keras_order_progbar_first_history_last():
    user = Callback()
    callbacks = CallbackList([user], add_history=True, add_progbar=True, model=FakeModel())
    kinds = [type(c) for c in callbacks]
    assert kinds == [ProgbarLogger, Callback, History]
    assert callbacks.history is callbacks.callbacks[-1]
    assert CallbackList(None).callbacks == []
    assert CallbackList(user).callbacks == [user]


def test_existing_history_and_progbar_are_reused_not_duplicated():
    history, progbar = History(), ProgbarLogger()
    user_list = [history, progbar]
    callbacks = CallbackList(user_list, add_history=True, add_progbar=True, model=FakeModel())
    assert callbacks.callbacks == [history, progbar]
    assert callbacks.history is history
    assert user_list == [history, progbar]


def test_a_non_callback_is_a_type_error_naming_its_index():
    with pytest.raises(TypeError, match=r'callbacks\[1\].*EarlyStopping'):
        CallbackList([Callback(), type('EarlyStopping', (), {})])


def test_hooks_run_in_order_and_share_one_copy_of_the_logs():
    calls = []

    class AddsLr(Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs['lr'] = 0.5

    model = FakeModel()
    callbacks = CallbackList([Recorder(calls), AddsLr()], add_history=True, model=model)
    loop_logs = {'loss': 1.0}
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    callbacks.on_train_batch_begin(0)
    callbacks.on_train_batch_end(0, {'loss': 2.0})
    callbacks.on_test_begin()
    callbacks.on_test_batch_begin(0)
    callbacks.on_test_batch_end(0, {'loss': 3.0})
    callbacks.on_test_end({'loss': 3.0})
    callbacks.on_epoch_end(0, loop_logs)
    callbacks.on_train_end(loop_logs)
    callbacks.on_predict_begin()
    callbacks.on_predict_batch_begin(0)
    callbacks.on_predict_batch_end(0, {'outputs': []})
    callbacks.on_predict_end()
    assert [c[0] for c in calls] == [
        'on_train_begin', 'on_epoch_begin', 'on_train_batch_begin', 'on_train_batch_end',
        'on_test_begin', 'on_test_batch_begin', 'on_test_batch_end', 'on_test_end',
        'on_epoch_end', 'on_train_end', 'on_predict_begin', 'on_predict_batch_begin',
        'on_predict_batch_end', 'on_predict_end']
    assert calls[1] == ('on_epoch_begin', 0)
    assert loop_logs == {'loss': 1.0}
    assert model.history.history == {'loss': [1.0], 'lr': [0.5]}


def test_on_batch_aliases_of_the_list_call_the_train_batch_hooks():
    seen = []

    class Train(Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append((batch, logs))

    callbacks = CallbackList([Train()])
    callbacks.on_batch_end(5, {'loss': 1.0})
    callbacks.on_batch_begin(6)
    assert seen == [(5, {'loss': 1.0})]


def test_history_records_each_epoch_from_initial_epoch():
    model = FakeModel()
    logs = [{'loss': 0.9, 'val_loss': 1.1}, {'loss': 0.7, 'val_loss': 1.0}]
    callbacks, _ = fit(model, [], logs, initial_epoch=3)
    history = callbacks.history
    assert model.history is history
    assert history.epoch == [3, 4]
    assert history.history == {'loss': [0.9, 0.7], 'val_loss': [1.1, 1.0]}
    assert history.model is model and history.params['epochs'] == 5
