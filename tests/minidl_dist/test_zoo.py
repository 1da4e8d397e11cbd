"""A zoo model fine-tuned under mpirun: the same bits as one process (micro-shards)."""

from tests.minidl_dist.launch import launch, results


def test_zoo_fine_tuning_gives_the_same_bits_on_1_and_2_ranks(tmp_path):
    (tmp_path / 'single').mkdir()
    (tmp_path / 'two').mkdir()
    launch('zoo_worker.py', tmp_path / 'single').check()  # one plain process
    launch('zoo_worker.py', tmp_path / 'two', ranks=2).check()
    single = results(tmp_path / 'single', 1)[0]
    for output in results(tmp_path / 'two', 2):
        assert output['digest'] == single['digest']
        assert output['loss'] == single['loss']
    assert single['loss'][-1] != single['loss'][0]  # it trained
