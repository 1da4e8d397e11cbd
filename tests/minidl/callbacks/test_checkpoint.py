import pathlib

import pytest

from minidl.callbacks import ModelCheckpoint
from tests.minidl.callbacks.fakes import FakeModel, fit

VAL_LOSS = [0.5, 0.4, 0.45, 0.3, 0.35]
VAL_ACCURACY = [0.6, 0.7, 0.65, 0.8, 0.8]
LOGS = [{'loss': 1.0 - i / 10, 'val_loss': v, 'val_accuracy': a}
        for i, (v, a) in enumerate(zip(VAL_LOSS, VAL_ACCURACY))]


def saved_paths(model):
    return [path for _, path, _ in model.saved]


def test_saves_every_epoch_with_a_formatted_name():
    model = FakeModel()
    fit(model, [ModelCheckpoint('w.{epoch:02d}-{val_loss:.2f}.h5')], LOGS)
    assert saved_paths(model) == ['w.01-0.50.h5', 'w.02-0.40.h5', 'w.03-0.45.h5',
                                  'w.04-0.30.h5', 'w.05-0.35.h5']
    assert {(method, overwrite) for method, _, overwrite in model.saved} == {('save', True)}


def test_save_weights_only_and_path_like_filepath(tmp_path):
    model = FakeModel()
    fit(model, [ModelCheckpoint(tmp_path / 'w{epoch}.h5', save_weights_only=True)], LOGS[:2])
    assert model.saved == [('save_weights', str(tmp_path / 'w1.h5'), True),
                           ('save_weights', str(tmp_path / 'w2.h5'), True)]


@pytest.mark.parametrize('monitor, mode, expected_epochs', [
    ('val_loss', 'auto', [1, 2, 4]),         # decreasing: 0.5, 0.4, 0.3
    ('val_loss', 'max', [1]),                # never above 0.5
    ('val_accuracy', 'auto', [1, 2, 4]),     # 'acc' in the name: max; 0.8 twice saves once
    ('val_accuracy', 'min', [1]),
])
def test_save_best_only_modes(monitor, mode, expected_epochs):
    model = FakeModel()
    fit(model, [ModelCheckpoint('best{epoch}.h5', monitor=monitor, mode=mode,
                                save_best_only=True)], LOGS)
    assert saved_paths(model) == [f'best{e}.h5' for e in expected_epochs]


def test_fmeasure_is_maximized_in_auto_mode_and_threshold_is_the_first_best():
    model = FakeModel()
    logs = [{'fmeasure': f} for f in (0.5, 0.7, 0.6)]
    fit(model, [ModelCheckpoint('f{epoch}', monitor='fmeasure', save_best_only=True,
                                initial_value_threshold=0.55)], logs)
    assert saved_paths(model) == ['f2']


def test_missing_monitor_warns_and_skips():
    model = FakeModel()
    with pytest.warns(RuntimeWarning, match='val_auc.*Available metrics are: loss,val_loss'):
        fit(model, [ModelCheckpoint('m.h5', monitor='val_auc', save_best_only=True)],
            [{'loss': 1.0, 'val_loss': 2.0}])
    assert model.saved == []


def test_verbose_messages(capsys):
    model = FakeModel()
    fit(model, [ModelCheckpoint('b{epoch}.h5', save_best_only=True, verbose=1)], LOGS[:3])
    assert capsys.readouterr().out == (
        '\nEpoch 00001: val_loss improved from inf to 0.50000, saving model to b1.h5\n'
        '\nEpoch 00002: val_loss improved from 0.50000 to 0.40000, saving model to b2.h5\n'
        '\nEpoch 00003: val_loss did not improve from 0.40000\n')
    fit(model, [ModelCheckpoint('a{epoch}.h5', verbose=1)], LOGS[:1])
    assert capsys.readouterr().out == '\nEpoch 00001: saving model to a1.h5\n'


def test_integer_save_freq_counts_batches_across_epochs():
    model = FakeModel()
    # 3 batches per epoch, a save every 2 batches: after batches 2, 4 and 6 of the run.
    fit(model, [ModelCheckpoint('e{epoch}b{batch}', save_freq=2)], LOGS[:2], steps=3)
    assert saved_paths(model) == ['e1b2', 'e2b1', 'e2b3']


def test_period_saves_every_n_epochs():
    model = FakeModel()
    checkpoint = ModelCheckpoint('p{epoch}', period=2)
    fit(model, [checkpoint], LOGS)
    assert saved_paths(model) == ['p2', 'p4']


def test_non_chief_calls_save_alike_prints_nothing_and_tracks_the_best(capsys):
    # Every process calls model.save (a strategy may gather sharded weights
    # there, on all processes); Model.save writes only on the chief.
    model = FakeModel(is_chief=False)
    checkpoint = ModelCheckpoint('b{epoch}.h5', save_best_only=True, verbose=1)
    fit(model, [checkpoint], LOGS)
    assert saved_paths(model) == ['b1.h5', 'b2.h5', 'b4.h5'] and capsys.readouterr().out == ''
    assert checkpoint.best == 0.3


def test_bad_arguments_and_paths(tmp_path):
    with pytest.raises(ValueError, match="save_freq.*'batch'"):
        ModelCheckpoint('m', save_freq='batch')
    with pytest.raises(ValueError, match='save_freq.*0'):
        ModelCheckpoint('m', save_freq=0)
    with pytest.raises(ValueError, match="mode.*'minimum'"):
        ModelCheckpoint('m', mode='minimum')
    with pytest.raises(TypeError, match='load_weights_on_restart'):
        ModelCheckpoint('m', load_weights_on_restart=True)
    with pytest.raises(KeyError, match='Failed to format.*val_mae'):
        fit(FakeModel(), [ModelCheckpoint('m{val_mae}')], LOGS[:1])
    with pytest.raises(IsADirectoryError, match='non-directory'):
        fit(FakeModel(), [ModelCheckpoint(str(pathlib.Path(tmp_path)))], LOGS[:1])
