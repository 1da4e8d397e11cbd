"""Z3 alexnet: the zoo's AlexNet against torchvision's (five convolutions), 224x224; batch 8.

minidl runs ``zoo.AlexNet`` (``variant='torchvision'``), PyTorch
:func:`benchmarks.torchvision_models.alexnet`, both with 1,000 classes and
logits out. W4 is the same network without the fifth convolution and with
10 classes.
"""

import zoo
from benchmarks import torchvision_models
from benchmarks.common import synthetic_batch

ID, NAME, BATCH = 'Z3', 'alexnet_tv', 8
PARAMS = MINIDL_PARAMS = 61_100_840


def data():
    return synthetic_batch(BATCH, (3, 224, 224), 1000)


def minidl_model():
    return zoo.AlexNet(classifier_activation=None)


def torch_model():
    return torchvision_models.alexnet()
