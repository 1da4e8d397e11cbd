"""Keras 2's scikit-learn wrappers: a model-building function as a scikit-learn estimator.

``KerasClassifier(build_fn, **sk_params)`` and ``KerasRegressor`` work in
scikit-learn's ``cross_val_score``, ``GridSearchCV`` and ``Pipeline``: each
``fit`` calls ``build_fn`` with the ``sk_params`` it takes (so they can be
searched over), then fits the compiled model with the ``sk_params`` that
``fit`` takes (``epochs``, ``batch_size``, ...). ``build_fn`` is a function,
an object with ``__call__``, or None for a subclass whose own ``__call__``
builds the model (Keras 2.2.4's three cases).

scikit-learn is not imported here: these classes follow its estimator
contract (``get_params`` returns the very objects the constructor got, as
``clone`` checks; ``__sklearn_tags__`` says classifier or regressor, which
scikit-learn 1.6 and later ask for) and import it only when it asks.
"""

import copy
import inspect
import types

import numpy as np

from minidl.models import Sequential
from minidl.utils.np_utils import to_categorical

__all__ = ['BaseWrapper', 'KerasClassifier', 'KerasRegressor']


def _accepts(fn, name):
    """Whether ``fn`` has a parameter called ``name`` (``**kwargs`` does not count, as in Keras)."""
    try:
        parameter = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind not in (
        inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _loss_name(model):
    # Keras 2 reads model.loss, the loss given to compile: a name or a function.
    loss = getattr(model, 'loss', None)
    if loss is None:
        loss = (getattr(model, '_compile_args', None) or {}).get('loss')
    return getattr(loss, '__name__', loss)


class BaseWrapper:
    """What the two wrappers share; use :class:`KerasClassifier` or :class:`KerasRegressor`.

    Args:
        build_fn: A function or callable object that builds, compiles and
            returns a model, taking its options as keyword arguments with
            defaults; None in a subclass that defines ``__call__``.
        **sk_params: Arguments of ``build_fn`` and of the model's ``fit``,
            ``predict``, ``predict_classes`` and ``evaluate``. Arguments
            given to this object's ``fit``, ``predict``, ... take precedence.

    Raises:
        ValueError: For a parameter that none of these functions takes.
    """

    def __init__(self, build_fn=None, **sk_params):
        self.build_fn = build_fn
        self.sk_params = sk_params
        self.check_params(sk_params)

    def _build_function(self):
        if self.build_fn is None:
            return self.__call__
        if isinstance(self.build_fn, (types.FunctionType, types.MethodType)):
            return self.build_fn
        return self.build_fn.__call__

    def check_params(self, params):
        """Refuse parameter names that neither the model's methods nor ``build_fn`` take.

        Raises:
            ValueError: Naming the first such parameter.
        """
        legal = [Sequential.fit, Sequential.predict, Sequential.predict_classes,
                 Sequential.evaluate, self._build_function()]
        for name in params:
            # 'nb_epoch' is Keras 1's name of epochs, which Keras 2 still lets through.
            if name != 'nb_epoch' and not any(_accepts(fn, name) for fn in legal):
                raise ValueError(f'{name} is not a legal parameter')

    def get_params(self, deep=True, **params):
        """The constructor's arguments: ``build_fn`` and every sk_param.

        The values are the objects given, not copies: scikit-learn's
        ``clone`` checks that they come back identical.
        """
        return {**self.sk_params, 'build_fn': self.build_fn}

    def set_params(self, **params):
        """Change sk_params (checked as in the constructor); returns ``self``."""
        if 'build_fn' in params:
            self.build_fn = params.pop('build_fn')
        self.check_params(params)
        self.sk_params.update(params)
        return self

    def filter_sk_params(self, fn, override=None):
        """The sk_params that ``fn`` takes, updated with ``override``.

        Args:
            fn: A function or method.
            override: Optional dict that takes precedence.

        Returns:
            A new dict.
        """
        result = {name: value for name, value in self.sk_params.items() if _accepts(fn, name)}
        result.update(override or {})
        return result

    def fit(self, x, y, **kwargs):
        """Build a new model with ``build_fn`` and fit it.

        Integer labels become one-hot when the model's loss is
        ``categorical_crossentropy``.

        Args:
            x: Samples, ``(n_samples, ...)``.
            y: Targets.
            **kwargs: Arguments of the model's ``fit``, over the sk_params.

        Returns:
            The model's History.
        """
        build = self._build_function()
        self.model = build(**self.filter_sk_params(build))
        y = np.asarray(y)
        if _loss_name(self.model) == 'categorical_crossentropy' and y.ndim != 2:
            y = to_categorical(y)
        fit_args = copy.deepcopy(self.filter_sk_params(Sequential.fit))
        fit_args.update(kwargs)
        return self.model.fit(x, y, **fit_args)


class KerasClassifier(BaseWrapper):
    """A classifier for scikit-learn: labels of any kind in, the same labels out.

    ``fit`` stores the labels seen in ``classes_`` (sorted; for one-hot
    targets, the column numbers) and trains on their indices; ``predict``
    maps the model's outputs back to them. ``score`` is the model's
    accuracy, so the model must be compiled with ``metrics=['accuracy']``.
    """

    _estimator_type = 'classifier'  # scikit-learn before 1.6 reads this

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, Tags, TargetTags
        return Tags(estimator_type='classifier', target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags())

    def fit(self, x, y, sample_weight=None, **kwargs):
        """Fit a new model on ``x`` and the labels ``y`` (see :meth:`BaseWrapper.fit`).

        Args:
            x: Samples.
            y: Labels ``(n_samples,)`` or ``(n_samples, 1)``, or one-hot
                ``(n_samples, n_classes)``.
            sample_weight: Optional weight per sample.
            **kwargs: Arguments of the model's ``fit``.

        Raises:
            ValueError: For labels of another shape.
        """
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] > 1:
            self.classes_ = np.arange(y.shape[1])
        elif y.ndim == 1 or (y.ndim == 2 and y.shape[1] == 1):
            self.classes_ = np.unique(y)
            y = np.searchsorted(self.classes_, y)
        else:
            raise ValueError(f'invalid shape for y: {y.shape}')
        self.n_classes_ = len(self.classes_)
        if sample_weight is not None:
            kwargs['sample_weight'] = sample_weight
        return super().fit(x, y, **kwargs)

    def predict(self, x, **kwargs):
        """The predicted label of each sample, one of ``classes_``.

        Args:
            x: Samples.
            **kwargs: Arguments of the model's ``predict_classes``.
        """
        kwargs = self.filter_sk_params(Sequential.predict_classes, kwargs)
        probabilities = self.model.predict(x, **kwargs)
        if probabilities.shape[-1] > 1:
            indices = probabilities.argmax(axis=-1)
        else:
            indices = (probabilities > 0.5).astype('int32')
        return self.classes_[indices]

    def predict_proba(self, x, **kwargs):
        """Class probabilities ``(n_samples, n_classes)``; a one-unit output gives two columns.

        Args:
            x: Samples.
            **kwargs: Arguments of the model's ``predict_proba``.
        """
        kwargs = self.filter_sk_params(Sequential.predict_proba, kwargs)
        probabilities = self.model.predict(x, **kwargs)
        if probabilities.shape[1] == 1:
            probabilities = np.hstack([1 - probabilities, probabilities])
        return probabilities

    def score(self, x, y, **kwargs):
        """The model's accuracy on ``x`` and the labels ``y``.

        Raises:
            ValueError: If the model was not compiled with an accuracy metric.
        """
        y = np.asarray(y)
        if not (y.ndim == 2 and y.shape[1] > 1):
            y = np.searchsorted(self.classes_, y)
        kwargs = self.filter_sk_params(Sequential.evaluate, kwargs)
        if _loss_name(self.model) == 'categorical_crossentropy' and y.ndim != 2:
            y = to_categorical(y, self.n_classes_)
        outputs = self.model.evaluate(x, y, **kwargs)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        for name, value in zip(self.model.metrics_names, outputs):
            # minidl keeps the name the user wrote; Keras 2.2.4 called both 'acc'.
            if name in ('acc', 'accuracy'):
                return value
        raise ValueError('the model is not configured to compute accuracy: pass '
                         'metrics=["accuracy"] to model.compile()')


class KerasRegressor(BaseWrapper):
    """A regressor for scikit-learn; ``score`` is the negative loss (higher is better)."""

    _estimator_type = 'regressor'  # scikit-learn before 1.6 reads this

    def __sklearn_tags__(self):
        from sklearn.utils import RegressorTags, Tags, TargetTags
        return Tags(estimator_type='regressor', target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags())

    def predict(self, x, **kwargs):
        """The model's predictions, with axes of size 1 removed (``(n_samples,)`` for one unit).

        Args:
            x: Samples.
            **kwargs: Arguments of the model's ``predict``.
        """
        kwargs = self.filter_sk_params(Sequential.predict, kwargs)
        return np.squeeze(self.model.predict(x, **kwargs))

    def score(self, x, y, **kwargs):
        """The negative of the model's loss on ``x`` and ``y``.

        Args:
            x: Samples.
            y: Targets.
            **kwargs: Arguments of the model's ``evaluate``.
        """
        kwargs = self.filter_sk_params(Sequential.evaluate, kwargs)
        loss = self.model.evaluate(x, y, **kwargs)
        return -loss[0] if isinstance(loss, list) else -loss
