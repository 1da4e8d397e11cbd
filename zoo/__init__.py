"""zoo: pretrained-ready models in ``keras.applications``' style (the zoo section of the README).

    import zoo
    model = zoo.ResNet20(weights='glyphs')            # fetched, hash-checked, loaded
    base = zoo.ResNet50(include_top=False, pooling='avg', input_shape=(160, 160, 3))

Families: :mod:`zoo.alexnet` (torchvision's AlexNet, benchmark W4's
'slides' variant, a 'small' one for 32x32 images), :mod:`zoo.resnet`
(torchvision's ResNet-18 to 152) and :mod:`zoo.resnet_cifar` (ResNet-20 to
110 for 32x32 images); :mod:`zoo.speech` is speech recognition (Deep Speech 1
and 2, features, CTC decoding with a language model, an espeak-ng corpus).
Registered weights are in :mod:`zoo.registry`; torchvision and Keras weight
files convert with :mod:`zoo.convert`.
"""

from zoo import alexnet, registry, resnet, resnet_cifar, speech
from zoo.alexnet import AlexNet
from zoo.resnet import ResNet18, ResNet34, ResNet50, ResNet101, ResNet152
from zoo.resnet_cifar import ResNet20, ResNet32, ResNet44, ResNet56, ResNet110
from zoo.speech import DeepSpeech, DeepSpeech2

__all__ = [
    'AlexNet', 'DeepSpeech', 'DeepSpeech2', 'ResNet18', 'ResNet34', 'ResNet50', 'ResNet101',
    'ResNet152', 'ResNet20', 'ResNet32', 'ResNet44', 'ResNet56', 'ResNet110', 'alexnet',
    'registry', 'resnet', 'resnet_cifar', 'speech',
]
