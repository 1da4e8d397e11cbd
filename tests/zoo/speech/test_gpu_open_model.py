"""On a GPU: the registered open-vocabulary Deep Speech 2 runs on cuDNN's kernels, its GRUs
too on padded batches (minidl.functions.rnn_ragged), and hears what it hears on the CPU
(skipped without CuPy, a GPU or cuDNN)."""

import numpy as np

import minidl
from minidl.compute import vendor

from zoo.speech import open_corpus
from zoo.speech.decoding import greedy_decode
from zoo.speech.deepspeech import DeepSpeech2
from zoo.speech.metrics import cer
from zoo.speech.transcribe import output_probabilities
from tests.minidl.compute.gpu_support import require_cudnn
from tests.zoo.speech.test_pretrained_open import SAMPLE_RATES


def _heard(device, features, monkeypatch):
    """``(per-utterance outputs, vendor kernels that ran)`` of the open model on ``device``."""
    ran = set()
    ask = vendor.kernel

    def recording(xp, name, dtype, **params):
        kernel = ask(xp, name, dtype, **params)
        if kernel is not None:
            ran.add(type(kernel).__module__ + '.' + type(kernel).__name__)
        return kernel

    previous = minidl.get_default_device()
    with monkeypatch.context() as patch:
        patch.setattr(vendor, 'kernel', recording)
        minidl.set_default_device(device)
        try:
            outputs = output_probabilities(DeepSpeech2(weights='open'), features)
        finally:
            minidl.set_default_device(previous)
    return outputs, ran


def _cudnn_kernels(ran):
    """The class names of the kernels that ran, each of which must be cuDNN's."""
    assert all(name.startswith('minidl.compute.cuda.cudnn.') for name in ran), ran
    return {name.split('.')[-1] for name in ran}


def _worst_difference(outputs, expected):
    assert [len(output) for output in outputs] == [len(output) for output in expected]
    return max(float(np.max(np.abs(np.asarray(o) - e))) for o, e in zip(outputs, expected))


def test_the_open_model_hears_the_sample_on_cudnn_as_on_the_cpu(monkeypatch):
    require_cudnn()
    sample = open_corpus.load_sample()
    cpu, _ = _heard('cpu', sample.features, monkeypatch)
    gpu, ran = _heard('gpu', sample.features, monkeypatch)
    assert _cudnn_kernels(ran) >= {'Conv2DKernel', 'BatchNormInferenceKernel', 'RNNKernel'}, ran
    # float32 through three bidirectional GRUs: the probabilities agree to rounding...
    worst = _worst_difference(gpu, cpu)
    assert worst < 1e-3, worst
    # ...and greedy decoding reads the sample at the CPU's error rate.
    texts = [greedy_decode(np.asarray(output)[None])[0] for output in gpu]
    assert abs(cer(sample.transcripts, texts) - SAMPLE_RATES['greedy'][0]) < 0.002
