"""W3 resnet20: CIFAR ResNet-20 (He et al. 2015, n = 3), projection shortcuts; batch 64.

minidl's side is the zoo's own model, ``zoo.ResNet20`` (logits out); it pads
a stride-2 3x3 convolution by 1 on every side, as PyTorch does, with a
ZeroPadding2D before a 'valid' convolution. PyTorch's side is written here.
"""

import torch.nn.functional as TF
from torch import nn

import zoo
from benchmarks.common import synthetic_batch

ID, NAME, BATCH = 'W3', 'resnet20', 64
PARAMS = 272_474
# count_params() also counts BatchNormalization's moving mean and variance (2 x 784).
MINIDL_PARAMS = PARAMS + 2 * 784
WIDTHS, BLOCKS = (16, 32, 64), 3


def data():
    return synthetic_batch(BATCH, (3, 32, 32), 10)


def minidl_model():
    return zoo.ResNet20(classes=10, classifier_activation=None)


class _Block(nn.Module):
    def __init__(self, channels, filters, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, filters, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(filters)
        self.conv2 = nn.Conv2d(filters, filters, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(filters)
        self.shortcut = nn.Identity() if stride == 1 else nn.Sequential(
            nn.Conv2d(channels, filters, 1, stride, bias=False), nn.BatchNorm2d(filters))

    def forward(self, x):
        y = TF.relu(self.bn1(self.conv1(x)))
        return TF.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class _ResNet20(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, WIDTHS[0], 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(WIDTHS[0]), nn.ReLU())
        blocks, channels = [], WIDTHS[0]
        for stage, filters in enumerate(WIDTHS):
            for block in range(BLOCKS):
                blocks.append(_Block(channels, filters, 2 if stage > 0 and block == 0 else 1))
                channels = filters
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(channels, 10)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))


def torch_model():
    return _ResNet20()
