"""Python operators and convenience methods of Tensor, bound to their functions.

``tensor.py`` is the lowest layer and imports no operation; this module,
imported by ``minidl.functions``, gives Tensor its ``+ - * / ** @``, unary
minus, comparisons, indexing and methods such as ``x.sum()``. A Python number
or array on the other side of an operator takes the tensor's floating dtype
(see ``Function``), so ``x * 2`` stays float32.
"""

import operator

from minidl.functions import array, math, reduction
from minidl.tensor import Tensor


def _defers(other):
    """Whether ``other`` handles the operator itself, as numpy asks: a symbolic tensor
    sets ``__array_ufunc__ = None`` so that ``tensor + symbolic`` records a graph node."""
    return not isinstance(other, Tensor) and getattr(type(other), '__array_ufunc__', True) is None


def _binary(function):
    def forward_operator(self, other):
        return NotImplemented if _defers(other) else function(self, other)

    def reflected_operator(self, other):
        return NotImplemented if _defers(other) else function(other, self)

    return forward_operator, reflected_operator


def _comparison(compare):
    def comparison_operator(self, other):
        if other is None:
            return NotImplemented
        return Tensor.wrap(compare(self.data, other.data if isinstance(other, Tensor) else other))
    return comparison_operator


def _reshape(self, *shape):
    return array.reshape(self, shape[0] if len(shape) == 1 else shape)


def _transpose(self, *axes):
    return array.transpose(self, (axes[0] if len(axes) == 1 else axes) or None)


Tensor.__add__, Tensor.__radd__ = _binary(math.add)
Tensor.__sub__, Tensor.__rsub__ = _binary(math.sub)
Tensor.__mul__, Tensor.__rmul__ = _binary(math.mul)
Tensor.__truediv__, Tensor.__rtruediv__ = _binary(math.div)
Tensor.__pow__, Tensor.__rpow__ = _binary(math.pow)
Tensor.__matmul__, Tensor.__rmatmul__ = _binary(math.matmul)
Tensor.__neg__ = math.neg
Tensor.__abs__ = math.abs
Tensor.__getitem__ = array.getitem
for _name, _compare in [('__eq__', operator.eq), ('__ne__', operator.ne), ('__lt__', operator.lt),
                        ('__le__', operator.le), ('__gt__', operator.gt), ('__ge__', operator.ge)]:
    setattr(Tensor, _name, _comparison(_compare))

Tensor.sum = reduction.sum
Tensor.mean = reduction.mean
Tensor.max = reduction.max
Tensor.min = reduction.min
Tensor.var = reduction.var
Tensor.exp = math.exp
Tensor.log = math.log
Tensor.sqrt = math.sqrt
Tensor.abs = math.abs
Tensor.clip = math.clip
Tensor.reshape = _reshape
Tensor.transpose = _transpose
Tensor.T = property(lambda self: array.transpose(self))
Tensor.astype = array.cast
