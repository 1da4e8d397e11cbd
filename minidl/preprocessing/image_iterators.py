"""Iterators of augmented image batches from arrays (``flow``) or folders (``flow_from_directory``).

Each is a :class:`minidl.data.Sequence` (``len``, ``[index]``, ``on_epoch_end``)
for ``Model.fit``, and an endless Python iterator (``next``) for loops and
``zip`` of two flows.

Randomness: an iterator owns a Generator, started at ``seed`` or, without
one, at a seed drawn from minidl's default generator when the iterator is
made. Each epoch takes one number from it, which fixes that epoch's order of
samples, and batch ``i`` of the epoch is augmented from a Generator seeded
with that number plus ``i``. A batch's contents therefore depend only on the
seed, the epoch and its index, not on the order in which batches are asked
for; two flows made with the same seed give the same batches.
"""

import os

import numpy as np

from minidl import config
from minidl.backend import normalize_data_format
from minidl.compute import Generator, new_generator, to_numpy
from minidl.data import Sequence
from minidl.preprocessing.image_files import (
    COLOR_MODES, array_to_img, class_folders, images_in, img_to_array,
    load_img, warn_unless_image_channels)

CLASS_MODES = ('categorical', 'binary', 'sparse', 'input', None)


class Iterator(Sequence):
    """Batches of ``batch_size`` of ``n`` samples, reshuffled each epoch if ``shuffle``.

    Subclasses define ``_get_batches_of_transformed_samples(index_array,
    generator)``, which builds the batch of the samples ``index_array``,
    drawing its augmentations from ``generator``.

    Args:
        n: Number of samples.
        batch_size: Samples per batch (the last batch of an epoch may be smaller).
        shuffle: Whether each epoch visits the samples in a new random order.
        seed: Integer seed of the iterator's randomness, or None.
    """

    def __init__(self, n, batch_size, shuffle, seed):
        if int(batch_size) < 1:
            raise ValueError(f'batch_size must be a positive integer, got {batch_size!r}')
        self.n, self.batch_size, self.shuffle, self.seed = n, int(batch_size), shuffle, seed
        self.batch_index = 0
        self.index_array = None
        self._generator = new_generator(seed)
        self._epoch_seed = None

    def __len__(self):
        return -(-self.n // self.batch_size)

    def _set_index_array(self):
        """Start an epoch: its order of samples and the seed of its augmentations."""
        self.index_array = (to_numpy(self._generator.permutation(self.n)) if self.shuffle
                            else np.arange(self.n))
        self._epoch_seed = int(self._generator.integers(0, 2**62))

    def __getitem__(self, index):
        if not -len(self) <= index < len(self):
            raise ValueError(f'asked for batch {index} of a {type(self).__name__} '
                             f'of {len(self)} batches')
        index %= len(self)
        if self.index_array is None:
            self._set_index_array()
        samples = self.index_array[self.batch_size * index:self.batch_size * (index + 1)]
        return self._get_batches_of_transformed_samples(
            samples, Generator(self._epoch_seed + index))

    def on_epoch_end(self):
        """Start a new epoch: reshuffle (if ``shuffle``) and draw new augmentations."""
        self._set_index_array()

    def reset(self):
        """Make ``next`` start again from the first batch of the current epoch."""
        self.batch_index = 0

    def __iter__(self):
        return self

    def __next__(self):
        if not self.n:
            raise ValueError(f'{type(self).__name__} has no samples to iterate over')
        batch = self[self.batch_index]
        self.batch_index += 1
        if self.batch_index == len(self):
            self.batch_index = 0
            self.on_epoch_end()
        return batch

    next = __next__

    def _get_batches_of_transformed_samples(self, index_array, generator):
        raise NotImplementedError(f'{type(self).__name__} must define '
                                  f'_get_batches_of_transformed_samples')

    def _transformed(self, image, generator):
        """One image, randomly transformed and standardized as the ImageDataGenerator says."""
        augmenter = self.image_data_generator
        parameters = augmenter.get_random_transform(image.shape, generator)
        return augmenter.standardize(augmenter.apply_transform(image, parameters))

    def _save(self, batch_x, index_array, generator):
        """Write a batch's images to ``save_to_dir`` (to look at the augmentations)."""
        for image, index in zip(batch_x, index_array):
            tag = int(generator.integers(0, 10**7))
            name = f'{self.save_prefix}_{index}_{tag}.{self.save_format}'
            array_to_img(image, self.data_format, scale=True).save(
                os.path.join(self.save_to_dir, name))


def _split(image_data_generator, subset):
    """The (start, stop) fractions of the samples that ``subset`` takes."""
    if subset is None:
        return None
    fraction = image_data_generator.validation_split
    if subset == 'validation':
        return 0.0, fraction
    if subset == 'training':
        return fraction, 1.0
    raise ValueError(f"subset must be 'training', 'validation' or None, got {subset!r}")


class NumpyArrayIterator(Iterator):
    """Augmented batches of images held in an array (what ``ImageDataGenerator.flow`` returns).

    Args:
        x: Images, a 4-D array; or a tuple ``(images, extra)`` where extra is
            an array or a list of arrays passed through unchanged as further inputs.
        y: Targets, or None to yield only the inputs.
        image_data_generator: The ImageDataGenerator that augments and standardizes.
        batch_size: Samples per batch.
        shuffle: Whether to reshuffle every epoch.
        sample_weight: Per-sample weights, yielded as a third item, or None.
        seed: Integer seed, or None.
        data_format: 'channels_last', 'channels_first', or None for ``image_data_format()``.
        save_to_dir: A folder to write each batch's images to, or None.
        save_prefix: Prefix of their file names.
        save_format: Their format ('png', 'jpeg').
        subset: 'training' or 'validation' to take one side of the
            generator's ``validation_split`` (validation takes the first samples).
        dtype: dtype of the image batches; minidl's default float dtype when None.
    """

    def __init__(self, x, y, image_data_generator, batch_size=32, shuffle=False,
                 sample_weight=None, seed=None, data_format=None, save_to_dir=None,
                 save_prefix='', save_format='png', subset=None, dtype=None):
        self.dtype = dtype or config.default_dtype
        extra = []
        if isinstance(x, (tuple, list)):
            if len(x) != 2:
                raise ValueError(f'x must be an image array or a tuple (images, extra inputs), '
                                 f'got a {type(x).__name__} of {len(x)} items')
            x, extra = x[0], x[1]
            extra = [np.asarray(a) for a in extra] if isinstance(extra, list) \
                else [np.asarray(extra)]
            for index, array in enumerate(extra):
                if len(array) != len(x):
                    raise ValueError(f'All of the arrays in x must have the same length: the '
                                     f'images have {len(x)}, extra input {index} has {len(array)}')
        if y is not None and len(x) != len(y):
            raise ValueError(f'`x` (images tensor) and `y` (labels) should have the same length: '
                             f'{len(x)} images, {len(y)} labels')
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError(f'x and sample_weight should have the same length: {len(x)} images, '
                             f'{len(sample_weight)} weights')
        split = _split(image_data_generator, subset)
        if split is not None:
            cut = int(len(x) * image_data_generator.validation_split)
            if y is not None and not np.array_equal(np.unique(y[:cut]), np.unique(y[cut:])):
                raise ValueError('the training and validation subsets hold different classes '
                                 'after the split; shuffle arrays that are sorted by label')
            part = slice(0, cut) if subset == 'validation' else slice(cut, None)
            x, extra = x[part], [array[part] for array in extra]
            y = None if y is None else y[part]
            sample_weight = None if sample_weight is None else sample_weight[part]
        self.x = np.asarray(x, dtype=self.dtype)
        if self.x.ndim != 4:
            raise ValueError(f'the images given to flow must be a 4-D array, got shape '
                             f'{self.x.shape}')
        self.data_format = normalize_data_format(data_format)
        warn_unless_image_channels(self.x.shape, 3 if self.data_format == 'channels_last' else 1,
                                   'NumpyArrayIterator')
        self.x_misc = extra
        self.y = None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.image_data_generator = image_data_generator
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        super().__init__(len(self.x), batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array, generator):
        batch_x = np.stack([self._transformed(self.x[i], generator) for i in index_array])
        batch_x = batch_x.astype(self.dtype, copy=False)
        if self.save_to_dir:
            self._save(batch_x, index_array, generator)
        inputs = [batch_x] + [array[index_array] for array in self.x_misc] if self.x_misc \
            else batch_x
        if self.y is None:
            return inputs
        if self.sample_weight is None:
            return inputs, self.y[index_array]
        return inputs, self.y[index_array], self.sample_weight[index_array]


class DirectoryIterator(Iterator):
    """Augmented batches of image files, one subfolder per class (``flow_from_directory``).

    Classes are the subfolders of ``directory`` in sorted order (or
    ``classes``); each class's images are the png, jpg, jpeg, bmp, ppm and
    tif(f) files anywhere below its folder, in sorted order.

    Args:
        directory: The folder holding one subfolder per class.
        image_data_generator: The ImageDataGenerator that augments and standardizes.
        target_size: ``(height, width)`` every image is resized to.
        color_mode: 'grayscale', 'rgb' or 'rgba' (1, 3 or 4 channels).
        classes: Names of the class subfolders, in label order; None for all, sorted.
        class_mode: The targets: 'categorical' (one-hot), 'binary' (0/1
            floats), 'sparse' (integer labels), 'input' (the images
            themselves) or None (no targets).
        batch_size: Images per batch.
        shuffle: Whether to reshuffle every epoch.
        seed: Integer seed, or None.
        data_format: 'channels_last', 'channels_first', or None for ``image_data_format()``.
        save_to_dir: A folder to write each batch's images to, or None.
        save_prefix: Prefix of their file names.
        save_format: Their format ('png', 'jpeg').
        follow_links: Whether to follow symbolic links inside the class folders.
        subset: 'training' or 'validation': that part of each class's files
            (validation takes the first ``validation_split`` of them).
        interpolation: Resampling used to resize the images (see ``load_img``).
        dtype: dtype of the batches; minidl's default float dtype when None.

    Attributes:
        class_indices: Dict from class name to label.
        classes: Label of each image (int32 array).
        filenames: Path of each image relative to ``directory``.
        samples: Number of images.
    """

    def __init__(self, directory, image_data_generator, target_size=(256, 256),
                 color_mode='rgb', classes=None, class_mode='categorical', batch_size=32,
                 shuffle=True, seed=None, data_format=None, save_to_dir=None, save_prefix='',
                 save_format='png', follow_links=False, subset=None, interpolation='nearest',
                 dtype=None):
        if color_mode not in COLOR_MODES:
            raise ValueError(f"color_mode must be 'grayscale', 'rgb' or 'rgba', "
                             f'got {color_mode!r}')
        if class_mode not in CLASS_MODES:
            raise ValueError(f'class_mode must be one of {CLASS_MODES}, got {class_mode!r}')
        self.directory, self.image_data_generator = directory, image_data_generator
        self.target_size, self.color_mode = tuple(target_size), color_mode
        self.class_mode, self.interpolation = class_mode, interpolation
        self.data_format = normalize_data_format(data_format)
        self.dtype = dtype or config.default_dtype
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        channels = len(COLOR_MODES[color_mode])
        self.image_shape = (self.target_size + (channels,) if self.data_format == 'channels_last'
                            else (channels,) + self.target_size)
        split = _split(image_data_generator, subset)
        class_names = list(classes) if classes else class_folders(directory)
        self.num_classes = len(class_names)
        self.class_indices = {name: label for label, name in enumerate(class_names)}
        self.filenames, labels = [], []
        for name in class_names:
            files = images_in(os.path.join(directory, name), follow_links)
            if split is not None:
                files = files[int(split[0] * len(files)):int(split[1] * len(files))]
            self.filenames += [os.path.join(name, file) for file in files]
            labels += [self.class_indices[name]] * len(files)
        self.classes = np.array(labels, dtype='int32')
        self.samples = len(self.filenames)
        print(f'Found {self.samples} images belonging to {self.num_classes} classes.')
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array, generator):
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        for position, index in enumerate(index_array):
            image = load_img(os.path.join(self.directory, self.filenames[index]),
                             color_mode=self.color_mode, target_size=self.target_size,
                             interpolation=self.interpolation)
            batch_x[position] = self._transformed(
                img_to_array(image, self.data_format, self.dtype), generator)
            image.close()
        if self.save_to_dir:
            self._save(batch_x, index_array, generator)
        labels = self.classes[index_array]
        if self.class_mode is None:
            return batch_x
        if self.class_mode == 'input':
            return batch_x, batch_x.copy()
        if self.class_mode == 'sparse':
            return batch_x, labels
        if self.class_mode == 'binary':
            return batch_x, labels.astype(self.dtype)
        return batch_x, np.eye(self.num_classes, dtype=self.dtype)[labels]
