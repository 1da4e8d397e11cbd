"""Finding and loading cuDNN: clear reports when it is missing or broken, and a
binding whose every call is declared."""

import pathlib
import re

import pytest

from minidl.compute.cuda.cudnn import api, library
from minidl.compute.cuda.cudnn.library import (
    ENVIRONMENT_VARIABLE, CudnnUnavailable, find_library_directory, open_library)

CUDNN_PACKAGE = pathlib.Path(api.__file__).parent


def test_an_empty_override_directory_is_reported_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(CudnnUnavailable) as raised:
        find_library_directory()
    message = str(raised.value)
    assert str(tmp_path) in message and 'libcudnn.so.9' in message
    assert 'pip install nvidia-cudnn-cu13' in message and ENVIRONMENT_VARIABLE in message


def test_the_override_directory_is_used_when_it_holds_the_library(tmp_path, monkeypatch):
    (tmp_path / 'libcudnn.so.9').write_bytes(b'')
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(tmp_path))
    assert find_library_directory() == tmp_path


def test_the_wheel_directory_is_found_under_the_nvidia_namespace(tmp_path, monkeypatch):
    directory = tmp_path / 'nvidia' / 'cudnn' / 'lib'
    directory.mkdir(parents=True)
    (directory / 'libcudnn.so.9').write_bytes(b'')
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert find_library_directory() == directory


def test_a_library_that_does_not_load_is_reported(tmp_path):
    (tmp_path / 'libcudnn.so.9').write_bytes(b'not a shared object')
    with pytest.raises(CudnnUnavailable, match='could not be loaded'):
        open_library(tmp_path)


def test_the_outcome_is_remembered_and_raised_again(monkeypatch, tmp_path):
    monkeypatch.setattr(library, '_loaded', None)
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(CudnnUnavailable) as first:
        library.library()
    (tmp_path / 'libcudnn.so.9').write_bytes(b'')  # too late: the failure is remembered
    with pytest.raises(CudnnUnavailable) as second:
        library.library()
    assert second.value is first.value


def called_names():
    """cuDNN function names (without 'cudnn') that the binding's modules call."""
    names = set()
    for path in CUDNN_PACKAGE.glob('*.py'):
        source = path.read_text()
        names.update(re.findall(r'functions(?:\(\))?\.(\w+)\(', source))
        # Names passed to getattr: the convolution directions and their getters.
        names.update(re.findall(r"'((?:Get)?Convolution\w+)'", source))
        for kind in re.findall(r"Descriptor\('(\w+)'\)", source):
            names.update({f'Create{kind}Descriptor', f'Destroy{kind}Descriptor'})
    return names


def test_every_called_function_has_a_prototype():
    called = called_names()
    assert {'ConvolutionForward', 'RNNBackwardWeights_v8', 'CreateRNNDataDescriptor'} <= called
    declared = {name.removeprefix('cudnn') for name in api.PROTOTYPES}
    assert called - declared == set()
