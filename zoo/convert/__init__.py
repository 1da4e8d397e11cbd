"""Weights trained elsewhere, loaded into the zoo's models of the same architecture.

    import zoo
    from zoo.convert import load_torch_weights

    model = zoo.ResNet50()
    load_torch_weights(model, 'resnet50-11ad3fa6.pth')     # torchvision's file (needs torch)
    load_torch_weights(model, 'resnet50.safetensors')      # the same, read with numpy alone
    load_torch_weights(model, torchvision_model.state_dict())

Formats:

* PyTorch / torchvision state dicts, in memory or in a ``.pth`` / ``.pt``
  file: :mod:`zoo.convert.torch_weights` (keys, layouts, checks).
* safetensors files: :mod:`zoo.convert.safetensors` reads and writes them
  with numpy, never running code from the file.
* Keras HDF5 files with the zoo's layer names (``keras.applications``'
  names) need no conversion: ``model.load_weights(path, by_name=True)``,
  or ``weights=path`` in a zoo constructor, load them as they are.
"""

from zoo.convert.safetensors import read_safetensors, save_safetensors
from zoo.convert.torch_weights import load_torch_weights

__all__ = ['load_torch_weights', 'read_safetensors', 'save_safetensors']
