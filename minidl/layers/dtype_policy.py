"""Dtype policies: which dtype a layer computes in and which it keeps its weights in.

tf.keras 2.4+'s API: a :class:`Policy` named 'float32' (or any dtype name)
computes and keeps weights in that dtype; 'mixed_float16' computes in
float16 and keeps float32 weights (the master weights the optimizer
updates). ``set_global_policy`` sets the policy of the layers made
afterwards that are given no ``dtype``; a layer's ``dtype`` argument takes
a policy, its name or a dtype.

bfloat16 ('mixed_bfloat16') is not offered: numpy has no bfloat16 dtype, and
the one ``ml_dtypes`` adds is no numpy floating type (its ``dtype.kind`` is
'V', einsum refuses it and matmul returns float32), while minidl tells
floating data by kind 'f' throughout; CuPy has none either.
"""

import numpy as np

from minidl import config

_MIXED = {'mixed_float16': 'float16'}
_REFUSED = {'mixed_bfloat16': 'bfloat16 is not offered: numpy has no bfloat16 dtype (ml_dtypes '
                              "adds one whose kind is 'V', which numpy's einsum and minidl's "
                              'floating checks refuse) and CuPy has none either; use '
                              "'mixed_float16'"}

_global = None  # the Policy set by set_global_policy, or None for config.default_dtype


class Policy:
    """A layer's dtypes: ``compute_dtype`` for its computation, ``variable_dtype`` for its
    weights.

    Args:
        name: 'mixed_float16', or a dtype name ('float32', 'float16', 'float64',
            'int32', ...) for a policy whose two dtypes are that dtype.

    Raises:
        ValueError: For an unknown name, and for 'mixed_bfloat16' (see the module).
    """

    def __init__(self, name):
        if isinstance(name, Policy):
            name = name.name
        if not isinstance(name, str):
            raise TypeError(f'a Policy is made from a name (a str), got {name!r:.100}')
        if name in _REFUSED:
            raise ValueError(f'Policy {name!r}: {_REFUSED[name]}')
        if name in _MIXED:
            compute, variable = _MIXED[name], 'float32'
        else:
            try:
                compute = variable = np.dtype(name).name
            except TypeError:
                raise ValueError(f"Policy name must be 'mixed_float16' or a dtype name, got "
                                 f'{name!r:.100}') from None
            if name != compute:
                raise ValueError(f'Policy name must be a dtype name as numpy spells it '
                                 f'({compute!r}), got {name!r:.100}')
        self._name, self._compute_dtype, self._variable_dtype = name, compute, variable

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        """The dtype layers compute in (their inputs are cast to it)."""
        return self._compute_dtype

    @property
    def variable_dtype(self):
        """The dtype of the layers' weights."""
        return self._variable_dtype

    @property
    def is_mixed(self):
        """Whether the two dtypes differ (weights are cast in the layers' calls)."""
        return self._compute_dtype != self._variable_dtype

    def get_config(self):
        return {'name': self._name}

    @classmethod
    def from_config(cls, config_dict):
        return cls(**config_dict)

    def __eq__(self, other):
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<Policy "{self._name}">'


def set_global_policy(policy):
    """Set the policy of layers made from now on without a ``dtype`` (tf.keras's function).

    Args:
        policy: A Policy, its name ('mixed_float16'), or None for
            ``config.default_dtype`` again.

    Raises:
        ValueError: For a policy whose variable dtype is not floating (weights
            must be floating to be trained).
    """
    global _global
    if policy is None:
        _global = None
        return
    policy = Policy(policy)
    if np.dtype(policy.variable_dtype).kind != 'f':
        raise ValueError(f'the global policy must be floating, got {policy.name!r}')
    _global = policy


def global_policy():
    """The policy set by :func:`set_global_policy`, else ``Policy(config.default_dtype)``."""
    return _global if _global is not None else Policy(np.dtype(config.default_dtype).name)


def policy_of(dtype):
    """The Policy a layer's ``dtype`` argument stands for.

    Args:
        dtype: None (the global policy), a Policy, a policy name or dtype, or
            the ``{'class_name': 'Policy', 'config': {'name': ...}}`` dict that
            :func:`serialize` (and tf.keras) writes into a layer's config.

    Raises:
        ValueError: For anything else.
    """
    if dtype is None:
        return global_policy()
    if isinstance(dtype, Policy):
        return dtype
    if isinstance(dtype, dict):
        if dtype.get('class_name') != 'Policy' or not isinstance(dtype.get('config'), dict):
            raise ValueError(f"a dtype given as a dict must be {{'class_name': 'Policy', "
                             f"'config': {{'name': ...}}}}, got {dtype!r:.200}")
        return Policy.from_config(dtype['config'])
    if isinstance(dtype, str) and dtype in _MIXED.keys() | _REFUSED.keys():
        return Policy(dtype)
    try:
        return Policy(np.dtype(dtype).name)
    except TypeError:
        raise ValueError(f'{dtype!r:.100} is neither a dtype nor a policy') from None


def serialize(policy):
    """A policy for a layer's config: its dtype name when it is one dtype (as Keras 2
    writes), else tf.keras's ``{'class_name': 'Policy', 'config': {'name': ...}}``."""
    if not policy.is_mixed:
        return policy.compute_dtype
    return {'class_name': 'Policy', 'config': policy.get_config()}
