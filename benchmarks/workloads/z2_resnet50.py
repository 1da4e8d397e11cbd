"""Z2 resnet50: the zoo's ResNet-50 against torchvision's architecture, 224x224 images; batch 8.

minidl runs ``zoo.ResNet50``, PyTorch :func:`benchmarks.torchvision_models.resnet50`
(torchvision's "v1.5", stride on the bottleneck's 3x3), both with 1,000
classes and logits out. At about 25 GFLOP per training step of the batch
it is meant for ``--device gpu``; on the CPU run it with few steps
(``python -m benchmarks Z2 --steps 3``).
"""

import zoo
from benchmarks import torchvision_models
from benchmarks.common import synthetic_batch

ID, NAME, BATCH = 'Z2', 'resnet50', 8
PARAMS = 25_557_032
# count_params() also counts BatchNormalization's moving mean and variance (2 x 26,560).
MINIDL_PARAMS = PARAMS + 2 * 26_560


def data():
    return synthetic_batch(BATCH, (3, 224, 224), 1000)


def minidl_model():
    return zoo.ResNet50(classifier_activation=None)


def torch_model():
    return torchvision_models.resnet50()
