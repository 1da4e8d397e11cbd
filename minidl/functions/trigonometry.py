"""Elementwise sine and cosine."""

from minidl.tensor import Function


class Sin(Function):
    def forward(self, x):
        self.x = x
        return self.xp.sin(x)

    def backward(self, grad):
        return grad * self.xp.cos(self.x)


class Cos(Function):
    def forward(self, x):
        self.x = x
        return self.xp.cos(x)

    def backward(self, grad):
        return -grad * self.xp.sin(self.x)


def sin(x):
    """Elementwise sine (radians)."""
    return Sin()(x)


def cos(x):
    """Elementwise cosine (radians)."""
    return Cos()(x)
