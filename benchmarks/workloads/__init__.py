"""The benchmark workloads, one module each, loaded by id with :func:`load`.

W0-W6 are the project's own workloads, each module its specification (data,
model, parameter count); Z1-Z3 time the zoo's ImageNet models (ResNet-18,
ResNet-50, torchvision's AlexNet) against the same architectures in PyTorch
(:mod:`benchmarks.torchvision_models`), under the same conventions; Z4 the
zoo's Deep Speech 2 (W5's bigger cousin) against its PyTorch twin, Z5 the
same on a batch padded to its longest utterance.

A network workload module defines:

* ``ID``, ``NAME``, ``BATCH``; ``PARAMS``, the spec's parameter count (which
  is PyTorch's), and ``MINIDL_PARAMS``, what minidl's ``count_params()``
  gives (it differs where Keras keeps other weights than PyTorch: one LSTM
  bias per gate set, BatchNormalization's moving statistics);
* ``data()``: the batch ``(x, y)`` as numpy arrays, images NCHW;
* ``minidl_model()``: the network as an uncompiled minidl Keras model taking
  channels-last input; ``torch_model()``: the same as a ``torch.nn.Module``;
* optionally ``minidl_loss`` (a loss for ``compile``) and
  ``torch_loss(logits, y)``, where the loss is not softmax cross-entropy.

W0 (sgemm) has no network; its module defines ``measure(frameworks, steps, warmup)``.
"""

import importlib

MODULES = {
    'W0': 'w0_sgemm', 'W1': 'w1_mlp', 'W2': 'w2_lenet', 'W3': 'w3_resnet20',
    'W4': 'w4_alexnet', 'W5': 'w5_birnn_speech', 'W6': 'w6_lstm_small',
    'Z1': 'z1_resnet18', 'Z2': 'z2_resnet50', 'Z3': 'z3_alexnet', 'Z4': 'z4_deepspeech2',
    'Z5': 'z5_deepspeech2_padded',
}

# What `python -m benchmarks` runs without arguments. On the CPU a step of Z1 or Z2 takes
# seconds and the three add minutes to a run, so they run only when named
# (`python -m benchmarks Z1 Z2 Z3`).
DEFAULT = ('W0', 'W1', 'W2', 'W3', 'W4', 'W5', 'W6')

# Largest acceptable median step time minidl / PyTorch, training and inference, the project's;
# for Z1-Z3 the zoo issue's (within 1.3 of PyTorch for ResNet-18/50 on the CPU); for Z4, Z5, W5's.
TARGETS = {'W1': 1.0, 'W2': 1.5, 'W3': 1.3, 'W4': 1.2, 'W5': 1.2, 'W6': 1.5,
           'Z1': 1.3, 'Z2': 1.3, 'Z3': 1.3, 'Z4': 1.2, 'Z5': 1.2}


def load(workload_id):
    """The module of workload ``workload_id`` ('W0' ... 'W6', 'Z1' ... 'Z3')."""
    return importlib.import_module(f'{__name__}.{MODULES[workload_id]}')
