"""Keras 2's ``preprocessing.image``: ImageDataGenerator, its iterators, and image file helpers.

``ImageDataGenerator`` describes a random augmentation (rotation, shifts,
shear, zoom, flips, channel and brightness shifts) and a standardization
(rescaling, centring, normalization, ZCA whitening). ``flow`` and
``flow_from_directory`` apply them on the fly to batches from arrays or from
image folders; the iterators they return feed ``Model.fit`` directly::

    datagen = ImageDataGenerator(rotation_range=20, width_shift_range=0.1,
                                 horizontal_flip=True)
    model.fit(datagen.flow(x_train, y_train, batch_size=32, seed=1), epochs=5)

Every random draw comes from a :class:`minidl.compute.Generator`, so the
same seeds give the same augmented batches on every run.
"""

import warnings

import numpy as np

from minidl import config
from minidl.backend import normalize_data_format
from minidl.preprocessing.image_affine import FILL_MODES, apply_affine_transform
from minidl.preprocessing.image_files import (
    array_to_img, img_to_array, load_img, save_img, warn_unless_image_channels)
from minidl.preprocessing.image_iterators import DirectoryIterator, Iterator, NumpyArrayIterator
from minidl.preprocessing.image_transforms import (
    apply_brightness_shift, apply_channel_shift, draw_shift, flip_axis, generator_from,
    random_brightness, random_channel_shift, random_rotation, random_shear, random_shift,
    random_zoom, uniform)

__all__ = [
    'DirectoryIterator', 'ImageDataGenerator', 'Iterator', 'NumpyArrayIterator',
    'apply_affine_transform', 'apply_brightness_shift', 'apply_channel_shift', 'array_to_img',
    'flip_axis', 'img_to_array', 'load_img', 'random_brightness', 'random_channel_shift',
    'random_rotation', 'random_shear', 'random_shift', 'random_zoom', 'save_img',
]

# Added to standard deviations before dividing, as Keras does.
_EPSILON = 1e-6


class ImageDataGenerator:
    """Random augmentation and standardization of image batches (Keras 2's arguments and defaults).

    Args:
        featurewise_center: Subtract the per-channel mean of the data given to ``fit``.
        samplewise_center: Subtract each image's own mean.
        featurewise_std_normalization: Divide by the per-channel standard
            deviation of the data given to ``fit`` (implies featurewise_center).
        samplewise_std_normalization: Divide each image by its own standard
            deviation (implies samplewise_center).
        zca_whitening: Apply the ZCA whitening fitted by ``fit`` (implies
            featurewise_center, overrides featurewise_std_normalization).
        zca_epsilon: Added to the eigenvalues in ZCA whitening.
        rotation_range: Rotations are drawn from [-rotation_range, rotation_range) degrees.
        width_shift_range: Horizontal shifts: a float (a fraction of the width
            if below 1, else pixels) draws from [-range, range); an int n draws
            whole pixels from (-n, n); a list draws one entry, with a random sign.
        height_shift_range: Vertical shifts, likewise.
        brightness_range: Two floats: brightness factors are drawn between them.
        shear_range: Shear angles are drawn from [-shear_range, shear_range) degrees.
        zoom_range: A float z (zooms drawn from [1 - z, 1 + z)) or [lower,
            upper]; rows and columns get independent factors, below 1 zooming in.
        channel_shift_range: Channel shifts are drawn from [-range, range).
        fill_mode: How points outside the image are filled: 'constant' (cval),
            'nearest' (aaa|abcd|ddd), 'reflect' (dcba|abcd|dcba) or 'wrap' (abcd|abcd|abcd).
        cval: The fill value for 'constant'.
        horizontal_flip: Flip half of the images left to right.
        vertical_flip: Flip half of the images upside down.
        rescale: A factor the images are multiplied by (after augmentation,
            before the other standardization); None or 0 for none.
        preprocessing_function: A function applied to each augmented image
            (a 3-D numpy array) before the rest of the standardization.
        data_format: 'channels_last', 'channels_first', or None for ``image_data_format()``.
        validation_split: Fraction of the data that ``subset='validation'`` takes.
        dtype: dtype of the generated batches; minidl's default float dtype when None.
    """

    def __init__(self, featurewise_center=False, samplewise_center=False,
                 featurewise_std_normalization=False, samplewise_std_normalization=False,
                 zca_whitening=False, zca_epsilon=1e-6, rotation_range=0, width_shift_range=0.,
                 height_shift_range=0., brightness_range=None, shear_range=0., zoom_range=0.,
                 channel_shift_range=0., fill_mode='nearest', cval=0., horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None,
                 data_format=None, validation_split=0.0, dtype=None):
        self.data_format = normalize_data_format(data_format)
        self.channel_axis, self.row_axis, self.col_axis = \
            (3, 1, 2) if self.data_format == 'channels_last' else (1, 2, 3)
        if fill_mode not in FILL_MODES:
            raise ValueError(f'fill_mode must be one of {FILL_MODES}, got {fill_mode!r}')
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(f'validation_split must be strictly between 0 and 1, '
                             f'got {validation_split!r}')
        if np.isscalar(zoom_range):
            zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2:
            zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f'zoom_range must be a float or a pair of floats, got {zoom_range!r}')
        if brightness_range is not None and len(brightness_range) != 2:
            raise ValueError(f'brightness_range must be a pair of floats, '
                             f'got {brightness_range!r}')
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening, self.zca_epsilon = zca_whitening, zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range, self.height_shift_range = width_shift_range, height_shift_range
        self.brightness_range = brightness_range
        self.shear_range, self.zoom_range = shear_range, zoom_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode, self.cval = fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale, self.preprocessing_function = rescale, preprocessing_function
        self.validation_split = validation_split
        self.dtype = dtype or config.default_dtype
        self.mean = self.std = self.principal_components = None
        self._resolve_implied_options()

    def _resolve_implied_options(self):
        """Switch on (or off) the options that others imply, with Keras's warnings."""
        def implied(option, value, reason):
            if getattr(self, option) != value:
                setattr(self, option, value)
                warnings.warn(f'ImageDataGenerator: {reason} sets {option}={value}', stacklevel=4)
        if self.zca_whitening:
            implied('featurewise_center', True, 'zca_whitening')
            implied('featurewise_std_normalization', False, 'zca_whitening')
        if self.featurewise_std_normalization:
            implied('featurewise_center', True, 'featurewise_std_normalization')
        if self.samplewise_std_normalization:
            implied('samplewise_center', True, 'samplewise_std_normalization')

    # ----- batches --------------------------------------------------------

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None,
             save_to_dir=None, save_prefix='', save_format='png', subset=None):
        """Augmented batches of the images in an array.

        Args:
            x: Images, a 4-D array; or ``(images, extra)``, where extra (an
                array or a list of arrays) is passed through as further inputs.
            y: Targets, or None to yield only the inputs.
            batch_size: Images per batch.
            shuffle: Whether to reshuffle every epoch.
            sample_weight: Per-sample weights (yielded as a third item), or None.
            seed: Integer seed of the shuffling and augmentation, or None to
                seed from minidl's default generator.
            save_to_dir: A folder to write the augmented images to, or None.
            save_prefix: Prefix of their file names.
            save_format: Their format ('png', 'jpeg').
            subset: 'training' or 'validation' (see ``validation_split``).

        Returns:
            A :class:`NumpyArrayIterator` yielding ``(x, y)`` (or
            ``(x, y, sample_weight)``, or ``x`` alone when y is None).
        """
        return NumpyArrayIterator(
            x, y, self, batch_size=batch_size, shuffle=shuffle, sample_weight=sample_weight,
            seed=seed, data_format=self.data_format, save_to_dir=save_to_dir,
            save_prefix=save_prefix, save_format=save_format, subset=subset, dtype=self.dtype)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode='rgb',
                            classes=None, class_mode='categorical', batch_size=32, shuffle=True,
                            seed=None, save_to_dir=None, save_prefix='', save_format='png',
                            follow_links=False, subset=None, interpolation='nearest'):
        """Augmented batches of the image files in ``directory``, one subfolder per class.

        See :class:`DirectoryIterator` for the arguments; classes are the
        subfolders in sorted order unless ``classes`` names them.

        Returns:
            A :class:`DirectoryIterator` yielding ``(x, y)`` (``x`` alone when
            ``class_mode`` is None).
        """
        return DirectoryIterator(
            directory, self, target_size=target_size, color_mode=color_mode, classes=classes,
            class_mode=class_mode, batch_size=batch_size, shuffle=shuffle, seed=seed,
            data_format=self.data_format, save_to_dir=save_to_dir, save_prefix=save_prefix,
            save_format=save_format, follow_links=follow_links, subset=subset,
            interpolation=interpolation, dtype=self.dtype)

    # ----- standardization ------------------------------------------------

    def standardize(self, x):
        """Apply the standardization to one image or a batch of images (a new array).

        In order: ``preprocessing_function``, ``rescale``, samplewise centring
        and normalization (over each image's pixels and channels),
        featurewise centring and normalization, ZCA whitening.
        """
        x = np.array(x, dtype=self.dtype)
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x = x * self.rescale
        image_axes = tuple(range(x.ndim - 3, x.ndim))
        if self.samplewise_center:
            x = x - np.mean(x, axis=image_axes, keepdims=True)
        if self.samplewise_std_normalization:
            x = x / (np.std(x, axis=image_axes, keepdims=True) + _EPSILON)
        if self.featurewise_center and self._fitted('featurewise_center', self.mean):
            x = x - self.mean
        if self.featurewise_std_normalization and self._fitted(
                'featurewise_std_normalization', self.std):
            x = x / (self.std + _EPSILON)
        if self.zca_whitening and self._fitted('zca_whitening', self.principal_components):
            flat = x.reshape(-1, int(np.prod(x.shape[-3:])))
            x = (flat @ self.principal_components).reshape(x.shape)
        return x

    @staticmethod
    def _fitted(option, statistic):
        if statistic is None:
            warnings.warn(f'ImageDataGenerator: {option} is set but the generator has not been '
                          f'fitted; call .fit(x) on training data first', stacklevel=3)
        return statistic is not None

    def fit(self, x, augment=False, rounds=1, seed=None):
        """Compute the statistics of featurewise standardization and ZCA whitening from ``x``.

        Args:
            x: Sample images, a 4-D array.
            augment: Fit on ``rounds`` randomly augmented copies of ``x`` instead.
            rounds: Number of augmented copies.
            seed: Integer seed of the augmentation, or None for minidl's default generator.
        """
        x = np.array(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f'ImageDataGenerator.fit: x must be a 4-D array of images, got '
                             f'shape {x.shape}')
        warn_unless_image_channels(x.shape, self.channel_axis, 'ImageDataGenerator.fit')
        if augment:
            generator = generator_from(seed)
            x = np.stack([self.random_transform(image, generator)
                          for _ in range(rounds) for image in x]).astype(self.dtype)
        statistic_axes = (0, self.row_axis, self.col_axis)
        if self.featurewise_center:
            self.mean = np.mean(x, axis=statistic_axes, keepdims=True)[0]
            x = x - self.mean
        if self.featurewise_std_normalization:
            self.std = np.std(x, axis=statistic_axes, keepdims=True)[0]
            x = x / (self.std + _EPSILON)
        if self.zca_whitening:
            flat = x.reshape(len(x), -1)
            u, s, _ = np.linalg.svd(flat.T @ flat / len(flat))
            self.principal_components = (u / np.sqrt(s + self.zca_epsilon)) @ u.T

    # ----- augmentation ---------------------------------------------------

    def get_random_transform(self, img_shape, seed=None):
        """Draw the parameters of one random transformation.

        Args:
            img_shape: Shape of the (single) image to transform.
            seed: An integer seed, a :class:`minidl.compute.Generator` to draw
                from, or None for minidl's default generator.

        Returns:
            A dict with the keys 'theta', 'tx', 'ty', 'shear', 'zx', 'zy',
            'flip_horizontal', 'flip_vertical', 'channel_shift_intensity' and
            'brightness' (see :meth:`apply_transform`).
        """
        generator = generator_from(seed)
        rows, cols = img_shape[self.row_axis - 1], img_shape[self.col_axis - 1]
        zoomed = list(self.zoom_range) != [1, 1]

        def shift(shift_range, size):
            return draw_shift(generator, shift_range, size) if np.any(shift_range) else 0
        return {
            'theta': (uniform(generator, -self.rotation_range, self.rotation_range)
                      if self.rotation_range else 0),
            'tx': shift(self.height_shift_range, rows),
            'ty': shift(self.width_shift_range, cols),
            'shear': (uniform(generator, -self.shear_range, self.shear_range)
                      if self.shear_range else 0),
            'zx': uniform(generator, *self.zoom_range) if zoomed else 1,
            'zy': uniform(generator, *self.zoom_range) if zoomed else 1,
            'flip_horizontal': bool(self.horizontal_flip) and uniform(generator, 0, 1) < 0.5,
            'flip_vertical': bool(self.vertical_flip) and uniform(generator, 0, 1) < 0.5,
            'channel_shift_intensity': (
                uniform(generator, -self.channel_shift_range, self.channel_shift_range)
                if self.channel_shift_range else None),
            'brightness': (uniform(generator, *self.brightness_range)
                           if self.brightness_range is not None else None),
        }

    def apply_transform(self, x, transform_parameters):
        """Transform one image as ``transform_parameters`` say.

        Args:
            x: One image, a 3-D array.
            transform_parameters: A dict with any of: 'theta' (rotation,
                degrees), 'tx' and 'ty' (shifts along rows and columns, pixels),
                'shear' (degrees), 'zx' and 'zy' (zoom factors), 'flip_horizontal'
                and 'flip_vertical' (bools), 'channel_shift_intensity' and
                'brightness' (floats or None). Missing keys mean no change.

        Returns:
            The transformed image: the affine part, then the channel shift,
            the flips and the brightness shift.
        """
        parameters = transform_parameters
        row_axis, col_axis, channel_axis = self.row_axis - 1, self.col_axis - 1, \
            self.channel_axis - 1
        x = apply_affine_transform(
            x, parameters.get('theta', 0), parameters.get('tx', 0), parameters.get('ty', 0),
            parameters.get('shear', 0), parameters.get('zx', 1), parameters.get('zy', 1),
            row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
            fill_mode=self.fill_mode, cval=self.cval)
        if parameters.get('channel_shift_intensity') is not None:
            x = apply_channel_shift(x, parameters['channel_shift_intensity'], channel_axis)
        if parameters.get('flip_horizontal', False):
            x = flip_axis(x, col_axis)
        if parameters.get('flip_vertical', False):
            x = flip_axis(x, row_axis)
        if parameters.get('brightness') is not None:
            x = apply_brightness_shift(x, parameters['brightness'])
        return x

    def random_transform(self, x, seed=None):
        """One image randomly transformed (``seed`` as in :meth:`get_random_transform`)."""
        return self.apply_transform(x, self.get_random_transform(np.shape(x), seed))
