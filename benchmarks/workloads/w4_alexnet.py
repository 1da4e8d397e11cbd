"""W4 alexnet: the 4-convolution "slides" AlexNet on 224x224 images; batch 8.

minidl's side is the zoo's own model, ``zoo.AlexNet(variant='slides')``
(logits out); PyTorch's is :func:`benchmarks.torchvision_models.alexnet_slides`,
torchvision's layout without the fifth convolution (its adaptive average
pool to 6x6 is the identity here).
"""

import zoo
from benchmarks import torchvision_models
from benchmarks.common import synthetic_batch

ID, NAME, BATCH = 'W4', 'alexnet', 8
PARAMS = MINIDL_PARAMS = 56_454_730


def data():
    return synthetic_batch(BATCH, (3, 224, 224), 10)


def minidl_model():
    return zoo.AlexNet(variant='slides', classes=10, classifier_activation=None)


def torch_model():
    return torchvision_models.alexnet_slides(num_classes=10)
