"""Straightforward float64 numpy versions of Keras 2's update formulas, and trajectory runners.

Each ``*_step(p, g, state, t, lr, ...)`` returns the new parameter after
step ``t`` (1-based) and keeps its slots in the dict ``state``; they follow
the formulas of the Keras 2 documentation and TensorFlow's kernels, written
out independently of minidl's implementation.
"""

import numpy as np

import minidl

#: The last shape has more elements than the optimizer's CPU piece (262144).
SHAPES = [(3, 4), (5,), (520, 520)]
STEPS = 6


def make_problem(seed=0, steps=STEPS):
    """Float32 starting parameters and ``steps`` lists of gradients."""
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
    grads = [[rng.standard_normal(shape).astype(np.float32) for shape in SHAPES]
             for _ in range(steps)]
    return params, grads


def make_tensors(params):
    tensors = []
    for index, array in enumerate(params):
        tensor = minidl.Tensor(array.copy(), requires_grad=True)
        tensor.name = f'layer_{index}/kernel:0'
        tensors.append(tensor)
    return tensors


def run_minidl(optimizer, params, grads, tensors=None):
    """The parameters (float32 copies) after each of ``optimizer``'s steps."""
    tensors = make_tensors(params) if tensors is None else tensors
    history = []
    for step_grads in grads:
        for tensor, grad in zip(tensors, step_grads):
            tensor.grad = minidl.Tensor(grad)
        optimizer.apply_gradients(tensors)
        history.append([tensor.numpy().copy() for tensor in tensors])
    return history


def run_reference(step, params, grads, learning_rate, **hyper):
    """The parameters after each step of the float64 ``step`` function.

    ``learning_rate`` is a float or a function of the 0-based iteration.
    """
    rate = learning_rate if callable(learning_rate) else (lambda iteration: learning_rate)
    values = [p.astype(np.float64) for p in params]
    states = [{} for _ in params]
    history = []
    for t, step_grads in enumerate(grads, start=1):
        values = [step(p, g.astype(np.float64), s, t, rate(t - 1), **hyper)
                  for p, g, s in zip(values, step_grads, states)]
        history.append(values)
    return history


def assert_trajectories_close(actual, expected, rtol=1e-5, atol=1e-6):
    assert len(actual) == len(expected)
    for step, (mine, theirs) in enumerate(zip(actual, expected), start=1):
        for index, (a, b) in enumerate(zip(mine, theirs)):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol,
                                       err_msg=f'step {step}, parameter {index}')


def _slot(state, name, p, initial=0.0):
    return state.setdefault(name, np.full_like(p, initial))


def sgd_step(p, g, state, t, lr, momentum=0.0, nesterov=False):
    if momentum == 0:
        return p - lr * g
    v = state['v'] = momentum * _slot(state, 'v', p) - lr * g
    return p + momentum * v - lr * g if nesterov else p + v


def rmsprop_step(p, g, state, t, lr, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False):
    ms = state['ms'] = rho * _slot(state, 'ms', p) + (1 - rho) * g * g
    denominator = ms
    if centered:
        mg = state['mg'] = rho * _slot(state, 'mg', p) + (1 - rho) * g
        denominator = ms - mg * mg
    if momentum == 0:
        return p - lr * g / (np.sqrt(denominator) + epsilon)
    mom = state['mom'] = momentum * _slot(state, 'mom', p) + lr * g / np.sqrt(denominator + epsilon)
    return p - mom


def adagrad_step(p, g, state, t, lr, initial_accumulator_value=0.0, epsilon=1e-7):
    a = state['a'] = _slot(state, 'a', p, initial_accumulator_value) + g * g
    return p - lr * g / (np.sqrt(a) + epsilon)


def adadelta_step(p, g, state, t, lr, rho=0.95, epsilon=1e-7):
    a = state['a'] = rho * _slot(state, 'a', p) + (1 - rho) * g * g
    u = _slot(state, 'u', p)
    delta = np.sqrt(u + epsilon) / np.sqrt(a + epsilon) * g
    state['u'] = rho * u + (1 - rho) * delta * delta
    return p - lr * delta


def adam_step(p, g, state, t, lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
              weight_decay=0.0):
    p = p - lr * weight_decay * p
    m = state['m'] = beta_1 * _slot(state, 'm', p) + (1 - beta_1) * g
    v = state['v'] = beta_2 * _slot(state, 'v', p) + (1 - beta_2) * g * g
    if amsgrad:
        v = state['vhat'] = np.maximum(_slot(state, 'vhat', p), v)
    lr_t = lr * np.sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
    return p - lr_t * m / (np.sqrt(v) + epsilon)


def nadam_step(p, g, state, t, lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7, schedule_decay=0.004):
    def mu(step):
        return beta_1 * (1 - 0.5 * 0.96 ** (schedule_decay * step))

    product = np.prod([mu(i) for i in range(1, t + 1)])
    m = state['m'] = beta_1 * _slot(state, 'm', p) + (1 - beta_1) * g
    v = state['v'] = beta_2 * _slot(state, 'v', p) + (1 - beta_2) * g * g
    g_prime = g / (1 - product)
    m_prime = m / (1 - product * mu(t + 1))
    v_prime = v / (1 - beta_2 ** t)
    m_bar = (1 - mu(t)) * g_prime + mu(t + 1) * m_prime
    return p - lr * m_bar / (np.sqrt(v_prime) + epsilon)


def adamax_step(p, g, state, t, lr, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    m = state['m'] = beta_1 * _slot(state, 'm', p) + (1 - beta_1) * g
    u = state['u'] = np.maximum(beta_2 * _slot(state, 'u', p), np.abs(g))
    return p - lr / (1 - beta_1 ** t) * m / (u + epsilon)


def run_torch(make_optimizer, params, grads):
    """The parameters after each step of a float64 PyTorch optimizer made by ``make_optimizer``."""
    import torch
    tensors = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in params]
    optimizer = make_optimizer(tensors)
    history = []
    for step_grads in grads:
        for tensor, grad in zip(tensors, step_grads):
            tensor.grad = torch.tensor(grad, dtype=torch.float64)
        optimizer.step()
        history.append([tensor.detach().numpy().copy() for tensor in tensors])
    return history
