import pytest

from minidl.callbacks import CSVLogger, LambdaCallback
from tests.minidl.callbacks.fakes import FakeModel, fit

LOGS = [{'loss': 0.5, 'val_loss': 0.625, 'accuracy': 0.75},
        {'loss': 0.25, 'val_loss': 0.5, 'accuracy': 0.875}]


def read(path):
    return path.read_bytes().decode()


def test_header_of_sorted_names_then_one_row_per_epoch(tmp_path):
    path = tmp_path / 'log.csv'
    fit(FakeModel(), [CSVLogger(path)], LOGS)
    assert read(path) == ('epoch,accuracy,loss,val_loss\r\n'
                          '0,0.75,0.5,0.625\r\n'
                          '1,0.875,0.25,0.5\r\n')


def test_each_row_is_on_disk_when_its_epoch_ends(tmp_path):
    path = tmp_path / 'log.csv'
    seen = []
    reader = LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(read(path)))

    def crash(epoch, logs):
        if epoch == 1:
            raise RuntimeError('crash')

    with pytest.raises(RuntimeError, match='crash'):
        fit(FakeModel(), [CSVLogger(str(path)), reader, LambdaCallback(on_epoch_end=crash)],
            LOGS)
    assert seen == ['epoch,accuracy,loss,val_loss\r\n0,0.75,0.5,0.625\r\n',
                    'epoch,accuracy,loss,val_loss\r\n0,0.75,0.5,0.625\r\n1,0.875,0.25,0.5\r\n']


def test_append_writes_the_header_only_to_an_empty_file(tmp_path):
    path = tmp_path / 'log.csv'
    path.write_text('')
    fit(FakeModel(), [CSVLogger(path, append=True)], LOGS[:1])
    fit(FakeModel(), [CSVLogger(path, append=True)], LOGS[1:], initial_epoch=1)
    assert read(path) == ('epoch,accuracy,loss,val_loss\r\n'
                          '0,0.75,0.5,0.625\r\n'
                          '1,0.875,0.25,0.5\r\n')
    fit(FakeModel(), [CSVLogger(path)], LOGS[1:])
    assert read(path) == 'epoch,accuracy,loss,val_loss\r\n0,0.875,0.25,0.5\r\n'


def test_missing_values_are_na_and_the_separator_is_used(tmp_path):
    path = tmp_path / 'log.tsv'
    fit(FakeModel(), [CSVLogger(path, separator='\t')], [LOGS[0], {'loss': 0.125}])
    assert read(path) == ('epoch\taccuracy\tloss\tval_loss\r\n'
                          '0\t0.75\t0.5\t0.625\r\n'
                          '1\tNA\t0.125\tNA\r\n')


def test_non_chief_writes_nothing(tmp_path):
    path = tmp_path / 'log.csv'
    fit(FakeModel(is_chief=False), [CSVLogger(path)], LOGS)
    assert not path.exists()


def test_bad_separator():
    with pytest.raises(ValueError, match="separator.*', '"):
        CSVLogger('log.csv', separator=', ')
