"""``keras.utils.vis_utils``: where Keras 2 scripts import ``plot_model`` from."""

from minidl.utils.model_plot import model_to_dot, plot_model

__all__ = ['model_to_dot', 'plot_model']
