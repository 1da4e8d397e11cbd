"""Z1 resnet18: the zoo's ResNet-18 against torchvision's architecture, 224x224 images; batch 16.

minidl runs ``zoo.ResNet18``, PyTorch :func:`benchmarks.torchvision_models.resnet18`
(torchvision's module layout and initialisation), both with 1,000 classes
and logits out, trained with the workloads' softmax cross-entropy and SGD.
"""

import zoo
from benchmarks import torchvision_models
from benchmarks.common import synthetic_batch

ID, NAME, BATCH = 'Z1', 'resnet18', 16
PARAMS = 11_689_512
# count_params() also counts BatchNormalization's moving mean and variance (2 x 4,800).
MINIDL_PARAMS = PARAMS + 2 * 4_800


def data():
    return synthetic_batch(BATCH, (3, 224, 224), 1000)


def minidl_model():
    return zoo.ResNet18(classifier_activation=None)


def torch_model():
    return torchvision_models.resnet18()
