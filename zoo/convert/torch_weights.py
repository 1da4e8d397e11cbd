"""torchvision state dicts (in memory, ``.pth`` or ``.safetensors``) into the zoo's models.

Each zoo layer with weights has one torchvision module, found from its name:

=================================  ===================================
zoo ResNet layer                   torchvision key prefix
=================================  ===================================
``conv1_conv``, ``conv1_bn``       ``conv1``, ``bn1``
``conv{s}_block{b}_{k}_conv/_bn``  ``layer{s-1}.{b-1}.conv{k}/bn{k}``
``conv{s}_block{b}_0_conv/_0_bn``  ``layer{s-1}.{b-1}.downsample.0/1``
``predictions``                    ``fc``
zoo AlexNet layer                  torchvision key prefix
``conv1`` ... ``conv5``            ``features.0, 3, 6, 8, 10``
``fc6``, ``fc7``, ``predictions``  ``classifier.1, 4, 6``
=================================  ===================================

Layouts become Keras's: a convolution's (out, in, kh, kw) weight the kernel
(kh, kw, in, out), a linear (out, in) weight the kernel (in, out), batch
normalization's weight, bias, running_mean and running_var gamma, beta,
moving_mean and moving_variance (``num_batches_tracked`` has no
counterpart and is ignored). torchvision flattens AlexNet's last feature map
channels-first (C, 6, 6), the zoo channels-last (6, 6, C), so fc6's input
rows are reordered.
"""

import collections.abc
import os
import re

import numpy as np

from zoo.convert.safetensors import read_safetensors

# Keras weight name -> torch parameter or buffer name.
_TORCH_NAMES = {'kernel': 'weight', 'bias': 'bias', 'gamma': 'weight', 'beta': 'bias',
                'moving_mean': 'running_mean', 'moving_variance': 'running_var'}
_IGNORED = 'num_batches_tracked'
_ALEXNET_FEATURES = (0, 3, 6, 8, 10)  # index of each convolution in torchvision's `features`
_ALEXNET_CLASSIFIER = {'fc6': 1, 'fc7': 4, 'predictions': 6}
_SHOWN = 5  # problems listed per kind in an error


def _resnet_prefix(layer_name):
    if layer_name == 'predictions':
        return 'fc'
    if layer_name in ('conv1_conv', 'conv1_bn'):
        return 'conv1' if layer_name.endswith('conv') else 'bn1'
    match = re.fullmatch(r'conv(\d+)_block(\d+)_(\d)_(conv|bn)', layer_name)
    if match is None:
        return None
    stage, block, index, kind = match.groups()
    prefix = f'layer{int(stage) - 1}.{int(block) - 1}.'
    if index == '0':
        return prefix + ('downsample.0' if kind == 'conv' else 'downsample.1')
    return prefix + kind + index


def _alexnet_prefix(layer_name):
    if layer_name in _ALEXNET_CLASSIFIER:
        return f'classifier.{_ALEXNET_CLASSIFIER[layer_name]}'
    match = re.fullmatch(r'conv([1-5])', layer_name)
    return f'features.{_ALEXNET_FEATURES[int(match.group(1)) - 1]}' if match else None


# family: (layer name -> key prefix, prefix of the keys of the top)
_FAMILIES = {'resnet': (_resnet_prefix, 'fc.'), 'alexnet': (_alexnet_prefix, 'classifier.')}


def load_torch_weights(model, source):
    """Load torchvision's weights of the same architecture into a zoo model.

    Every check runs before any weight changes: a state dict that lacks a
    key the model needs, has a key the model cannot take or a tensor of
    another shape raises, and the model keeps its weights. With a model
    built with ``include_top=False`` the state dict's top (ResNet's ``fc``,
    AlexNet's ``classifier``) is skipped.

    Args:
        model: A zoo ResNet (18 to 152, or a CIFAR ResNet with the same
            layer names) or AlexNet (any variant).
        source: A state dict (mapping of key -> torch tensor or numpy
            array), or the path of a ``.pth`` / ``.pt`` file (read with
            ``torch.load(weights_only=True)``, so it needs PyTorch) or of a
            ``.safetensors`` file (read with numpy alone).

    Returns:
        ``model``, with the weights set.

    Raises:
        ValueError: If the weights do not fit the model (the message names
            the keys and the shapes), the model is neither a zoo ResNet nor
            an AlexNet, or the file cannot be read.
        TypeError: If ``source`` is neither a mapping nor a path.
        ImportError: If a ``.pth`` file is given and PyTorch is missing.
    """
    state, origin = _read_source(source)
    family = _family(model)
    prefix_of, top_prefix = _FAMILIES[family]
    plan = _plan(model, family, prefix_of)
    has_top = any(layer.name == 'predictions' for layer in model.layers)
    _check(model, plan, state, origin, top_prefix if not has_top else None)
    arrays = [(layer, [convert(_as_array(origin, key, state[key])) for _, key, convert in items])
              for layer, items in plan]
    for layer, values in arrays:
        layer.set_weights(values)
    return model


def _read_source(source):
    if isinstance(source, collections.abc.Mapping):
        return source, 'the state dict'
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f'load_torch_weights: source must be a state dict or a .pth, .pt or '
                        f'.safetensors path, got {type(source).__name__}')
    path = os.fspath(source)
    suffix = os.path.splitext(path)[1].lower()
    if suffix == '.safetensors':
        return read_safetensors(path)[0], path
    if suffix in ('.pth', '.pt'):
        return _read_pth(path), path
    raise ValueError(f'load_torch_weights: {path}: expected a .pth, .pt or .safetensors file, '
                     f'got the suffix {suffix!r}')


def _read_pth(path):
    try:
        import torch  # only here: nothing else in zoo needs PyTorch
    except ImportError as error:
        raise ImportError(f'load_torch_weights: reading {path} needs PyTorch (pip install '
                          f'torch); a .safetensors file loads without it') from error
    try:
        state = torch.load(path, map_location='cpu', weights_only=True)
    except OSError:
        raise
    except Exception as error:
        raise ValueError(f'{path}: torch.load(weights_only=True) cannot read it: {error}') \
            from error
    if not isinstance(state, collections.abc.Mapping):
        raise ValueError(f'{path}: holds a {type(state).__name__}, not a state dict')
    return state


def _family(model):
    names = {layer.name for layer in model.layers}
    if 'conv1_conv' in names:
        return 'resnet'
    if 'conv1' in names and 'conv2' in names:
        return 'alexnet'
    raise ValueError(f'load_torch_weights: model {model.name!r} is neither a zoo ResNet (layer '
                     f'conv1_conv) nor a zoo AlexNet (layers conv1, conv2, ...)')


def _plan(model, family, prefix_of):
    """``[(layer, [(weight, torch key, torch array -> Keras array), ...]), ...]``."""
    plan = []
    for layer in model.layers:
        if not layer.weights:
            continue
        prefix = prefix_of(layer.name)
        if prefix is None:
            raise ValueError(f'load_torch_weights: layer {layer.name!r} of model {model.name!r} '
                             f'has weights but no torchvision {family} counterpart')
        items = []
        for weight in layer.weights:
            name = weight.name.rsplit('/', 1)[-1].split(':')[0]
            items.append((weight, f'{prefix}.{_TORCH_NAMES[name]}',
                          _converter(model, family, layer.name, weight.shape)))
        plan.append((layer, items))
    return plan


def _converter(model, family, layer_name, shape):
    if len(shape) == 4:
        return lambda array: array.transpose(2, 3, 1, 0)
    if len(shape) == 2 and family == 'alexnet' and layer_name == 'fc6':
        height, width, channels = model.get_layer('flatten').input_shape[1:]
        return lambda array: array.reshape(-1, channels, height, width).transpose(
            2, 3, 1, 0).reshape(height * width * channels, -1)
    if len(shape) == 2:
        return lambda array: array.T
    return lambda array: array


def _torch_shape(shape):
    """The shape torch stores a weight of Keras shape ``shape`` in."""
    if len(shape) == 4:
        return (shape[3], shape[2], shape[0], shape[1])
    return tuple(reversed(shape))


def _check(model, plan, state, origin, skipped_prefix):
    expected = {key: (layer, weight) for layer, items in plan for weight, key, _ in items}
    missing = [repr(key) for key in expected if key not in state]
    unexpected = [repr(key) for key in state if key not in expected
                  and key.rsplit('.', 1)[-1] != _IGNORED
                  and not (skipped_prefix and key.startswith(skipped_prefix))]
    wrong, hint = [], ''
    for key, (layer, weight) in expected.items():
        if key not in state:
            continue
        have, need = _shape(state[key]), _torch_shape(weight.shape)
        if have != need:
            wrong.append(f'{key!r} has shape {have}, layer {layer.name!r} needs {need} '
                         f'(Keras shape {tuple(weight.shape)})')
            if layer.name == 'predictions':
                hint = (f'\nThe state dict\'s top has {have[0]} classes: build the model with '
                        f'classes={have[0]}, or with include_top=False to load all but the top.')
    problems = [f'\n  {len(found)} {kind}: {", ".join(found[:_SHOWN])}'
                f'{" ..." if len(found) > _SHOWN else ""}'
                for kind, found in (('missing key(s)', missing),
                                    ('unexpected key(s)', unexpected),
                                    ('shape mismatch(es)', wrong)) if found]
    if problems:
        raise ValueError(f'load_torch_weights: {origin} does not fit model {model.name!r} '
                         f'(nothing was loaded):' + ''.join(problems) + hint)


def _shape(value):
    return tuple(value.shape) if hasattr(value, 'shape') else np.shape(value)


def _as_array(origin, key, value):
    """``value`` as a finite floating-point numpy array (torch tensors converted here)."""
    if hasattr(value, 'detach'):
        # A torch tensor; .float() also widens bfloat16, which numpy lacks.
        if not value.is_floating_point():
            raise ValueError(f'{origin}: {key!r} has dtype {value.dtype}; weights are floating '
                             f'point')
        value = value.detach().cpu().float().numpy()
    array = np.asarray(value)
    if array.dtype.kind != 'f':
        raise ValueError(f'{origin}: {key!r} has dtype {array.dtype}; weights are floating point')
    if not np.isfinite(array).all():
        raise ValueError(f'{origin}: {key!r} holds NaN or infinite values')
    return array
