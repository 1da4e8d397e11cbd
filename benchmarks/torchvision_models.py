"""torchvision's ResNet and AlexNet as plain ``torch.nn`` modules, with its state-dict keys.

torchvision's wheel does not install beside the torch this project pins, so
the architectures are written here from their definitions (He et al. 2015;
Krizhevsky 2014, "One weird trick", the one-tower AlexNet torchvision
follows). The benchmarks time them against the zoo's models, and the
converter's tests use them as the reference: a state dict of these modules
has exactly the keys, shapes and layouts of torchvision's, so it loads
through :func:`zoo.convert.load_torch_weights` as a torchvision checkpoint
would.

* ResNet is torchvision's "v1.5": a bottleneck block strides on its 3x3
  convolution; convolutions have no bias; the shortcut is ``downsample``
  (1x1 convolution and batch normalization) where the shape changes.
* AlexNet: ``features`` (convolutions at indices 0, 3, 6, 8, 10),
  ``avgpool`` (adaptive to 6x6, the identity at 224x224) and
  ``classifier`` (dropout, linear 1, 4, 6). :func:`alexnet_slides` is
  benchmark W4's network, the same without the fifth convolution.

Initialisation is torchvision's: He-normal (fan-out) convolutions in
ResNet, unit scale and zero shift in batch normalization; PyTorch's layer
defaults elsewhere.
"""

from torch import nn


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch normalization and a shortcut (ResNet-18/34)."""

    expansion = 1

    def __init__(self, channels, width, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = _downsample(channels, width * self.expansion, stride)

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + shortcut)


class Bottleneck(nn.Module):
    """1x1, 3x3 (strided) and 1x1 convolutions, output ``4 * width`` wide (ResNet-50+)."""

    expansion = 4

    def __init__(self, channels, width, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, width * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(width * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = _downsample(channels, width * self.expansion, stride)

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        return self.relu(self.bn3(self.conv3(y)) + shortcut)


def _downsample(channels, out_channels, stride):
    if stride == 1 and channels == out_channels:
        return None
    return nn.Sequential(nn.Conv2d(channels, out_channels, 1, stride, bias=False),
                         nn.BatchNorm2d(out_channels))


class ResNet(nn.Module):
    """torchvision's ImageNet ResNet: stem, four stages (``layer1``..``layer4``), ``fc``.

    Args:
        block: :class:`BasicBlock` or :class:`Bottleneck`.
        counts: Blocks per stage.
        num_classes: Width of ``fc``.
    """

    def __init__(self, block, counts, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        channels = 64
        for index, count in enumerate(counts):
            width = 64 * 2 ** index
            blocks = []
            for number in range(count):
                stride = 2 if index > 0 and number == 0 else 1
                blocks.append(block(channels, width, stride))
                channels = width * block.expansion
            setattr(self, f'layer{index + 1}', nn.Sequential(*blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(channels, num_classes)
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def resnet18(num_classes=1000):
    """ResNet-18 (11,689,512 parameters at 1,000 classes)."""
    return ResNet(BasicBlock, (2, 2, 2, 2), num_classes)


def resnet34(num_classes=1000):
    """ResNet-34 (21,797,672 parameters at 1,000 classes)."""
    return ResNet(BasicBlock, (3, 4, 6, 3), num_classes)


def resnet50(num_classes=1000):
    """ResNet-50 (25,557,032 parameters at 1,000 classes)."""
    return ResNet(Bottleneck, (3, 4, 6, 3), num_classes)


def resnet101(num_classes=1000):
    """ResNet-101 (44,549,160 parameters at 1,000 classes)."""
    return ResNet(Bottleneck, (3, 4, 23, 3), num_classes)


def resnet152(num_classes=1000):
    """ResNet-152 (60,192,808 parameters at 1,000 classes)."""
    return ResNet(Bottleneck, (3, 8, 36, 3), num_classes)


class AlexNet(nn.Module):
    """torchvision's AlexNet layout: ``features``, ``avgpool`` to 6x6, ``classifier``.

    Args:
        convolutions: ``(out_channels, kernel, stride, padding)`` per
            convolution; max pools (3x3, stride 2) follow the first, the
            second and the last.
        num_classes: Width of the last linear layer.
    """

    def __init__(self, convolutions, num_classes=1000):
        super().__init__()
        features, channels = [], 3
        pooled = (0, 1, len(convolutions) - 1)
        for index, (out_channels, kernel, stride, padding) in enumerate(convolutions):
            features += [nn.Conv2d(channels, out_channels, kernel, stride, padding),
                         nn.ReLU(inplace=True)]
            if index in pooled:
                features.append(nn.MaxPool2d(3, 2))
            channels = out_channels
        self.features = nn.Sequential(*features)
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(0.5), nn.Linear(channels * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


_ALEXNET_CONVOLUTIONS = [(64, 11, 4, 2), (192, 5, 1, 2), (384, 3, 1, 1), (256, 3, 1, 1),
                         (256, 3, 1, 1)]


def alexnet(num_classes=1000):
    """torchvision's AlexNet, five convolutions (61,100,840 parameters at 1,000 classes)."""
    return AlexNet(_ALEXNET_CONVOLUTIONS, num_classes)


def alexnet_slides(num_classes=1000):
    """Benchmark W4's AlexNet: without the fifth convolution (56,454,730 at 10 classes)."""
    return AlexNet(_ALEXNET_CONVOLUTIONS[:4], num_classes)
