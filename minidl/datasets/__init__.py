"""Keras-style data set loaders: ``(x_train, y_train), (x_test, y_test) = mnist.load_data(path)``.

Nothing is downloaded: ``digits`` comes with scikit-learn, ``glyphs`` is
rendered from the fonts matplotlib ships, ``mnist``, ``cifar10``, ``imdb``
and ``reuters`` read files you have placed in a local directory. Each loader
returns numpy arrays in Keras's layout and dtype.
"""

from minidl.datasets import cifar10, digits, glyphs, imdb, mnist, reuters

__all__ = ['cifar10', 'digits', 'glyphs', 'imdb', 'mnist', 'reuters']
