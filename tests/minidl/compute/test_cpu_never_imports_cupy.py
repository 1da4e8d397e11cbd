"""A CPU-only run never imports CuPy: CuPy starts CUDA, which a machine with no GPU
(or a GPU it must not touch) should not pay for or see.

The truth is a stand-in ``cupy`` package put first on the path of a fresh
process: importing it writes a marker file. Training, evaluating, saving and
loading a model with convolutions, batch norm, pooling and an LSTM on the CPU
must leave no marker; asking for the 'gpu' device (the control) must.
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]

STAND_IN = '''
import os, pathlib
pathlib.Path(os.environ['CUPY_MARKER']).write_text('imported')
raise ImportError('stand-in cupy: not installed here')
'''

CPU_RUN = '''
import sys
import numpy as np
import minidl
from minidl.layers import (LSTM, BatchNormalization, Conv2D, Dense, Flatten, Input,
                           MaxPooling2D, Reshape)
from minidl.models import Model, load_model

minidl.set_seed(0)
inputs = Input((8, 8, 3))
h = MaxPooling2D()(BatchNormalization()(Conv2D(4, 3, padding='same')(inputs)))
h = LSTM(5)(Reshape((4, 16))(h))
model = Model(inputs, Dense(2, activation='softmax')(h))
model.compile('adam', 'sparse_categorical_crossentropy')
x = np.random.default_rng(0).standard_normal((16, 8, 8, 3)).astype('float32')
y = np.arange(16) % 2
model.fit(x, y, epochs=1, batch_size=8, verbose=0)
model.evaluate(x, y, verbose=0)
model.save(sys.argv[1])
load_model(sys.argv[1]).predict(x)
'''

GPU_REQUEST = '''
import numpy as np
import minidl
try:
    minidl.Tensor(np.ones(2), device='gpu')
except RuntimeError as error:
    print(error)
'''


def run(script, tmp_path, *args):
    package = tmp_path / 'stand_in' / 'cupy'
    package.mkdir(parents=True, exist_ok=True)
    (package / '__init__.py').write_text(STAND_IN)
    marker = tmp_path / 'marker'
    marker.unlink(missing_ok=True)
    environment = {'PYTHONPATH': f'{package.parent}:{ROOT}', 'CUPY_MARKER': str(marker),
                   'PATH': '/usr/bin:/bin', 'MINIDL_NUM_THREADS': '1'}
    done = subprocess.run([sys.executable, '-c', script, *args], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return marker.exists(), done.stdout


def test_training_saving_and_loading_on_the_cpu_import_no_cupy(tmp_path):
    imported, _ = run(CPU_RUN, tmp_path, str(tmp_path / 'model.h5'))
    assert not imported


def test_the_stand_in_is_seen_when_a_gpu_is_asked_for(tmp_path):
    imported, printed = run(GPU_REQUEST, tmp_path)
    assert imported and 'CuPy' in printed
