"""Keras's mnist_mlp example on the digits set, made data-parallel by three lines.

The model and calls are those of tests/keras_examples/test_mnist_examples.py::test_mnist_mlp
(imports changed from keras to minidl); the lines marked "+" are all that
distributed training adds. Run with ``mpirun -np 2 python mnist_mlp.py``.
"""

import minidl
import minidl_dist as dist  # +
from minidl.datasets import digits
from minidl.layers import Dense, Dropout
from minidl.models import Sequential
from minidl.optimizers import RMSprop
from minidl.utils import to_categorical

dist.init()  # +
minidl.set_seed(1)
(x_train, y_train), (x_test, y_test) = digits.load_data()
x_train, x_test = x_train.reshape(-1, 64) / 16, x_test.reshape(-1, 64) / 16
y_train, y_test = to_categorical(y_train, 10), to_categorical(y_test, 10)

model = Sequential()
model.add(Dense(512, activation='relu', input_shape=(64,)))
model.add(Dropout(0.2))
model.add(Dense(512, activation='relu'))
model.add(Dropout(0.2))
model.add(Dense(10, activation='softmax'))
model.compile(loss='categorical_crossentropy', optimizer=dist.DistributedOptimizer(RMSprop()),  # +
              metrics=['accuracy'])
history = model.fit(x_train.astype('float32'), y_train, batch_size=128, epochs=12, verbose=2,
                    validation_data=(x_test.astype('float32'), y_test))
score = model.evaluate(x_test.astype('float32'), y_test, verbose=0)
print(f'rank {dist.rank()}: test accuracy {score[1]:.4f}')
