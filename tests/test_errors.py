"""Every exception class of kompute_ml/errors.py pickles with its message and attributes intact:
errors cross processes (joblib, Dask workers) and must arrive as they were raised."""

import concurrent.futures
import inspect
import multiprocessing
import pickle

import pytest

from kompute_ml import errors

# every class in errors.py, found, not listed: a new one is tested the day it is added
CLASSES = [c for _, c in inspect.getmembers(errors, inspect.isclass)
           if issubclass(c, BaseException) and c.__module__ == errors.__name__]

# classes whose __init__ takes more than a message: an instance with every attribute set
SAMPLES = {
    errors.OutOfMemoryError: lambda: errors.OutOfMemoryError(
        1 << 20, "llvmpipe", "pool limit reached", total=3 << 20, limit=4 << 20),
}


def _sample(cls):
    if cls in SAMPLES:
        return SAMPLES[cls]()
    try:
        return cls(f"{cls.__name__}: what went wrong, and where")
    except TypeError as exc:
        pytest.fail(f"{cls.__name__}.__init__ needs more than a message: add it to SAMPLES ({exc})")


def test_every_class_is_found_and_exported():
    assert errors.KomputeMLError in CLASSES and errors.OutOfMemoryError in CLASSES
    assert sorted(c.__name__ for c in CLASSES) == sorted(errors.__all__)
    assert all(issubclass(c, errors.KomputeMLError) for c in CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_round_trip_keeps_type_message_and_attributes(cls, protocol):
    exc = _sample(cls)
    exc.add_note("a note added on the way up")
    back = pickle.loads(pickle.dumps(exc, protocol=protocol))
    assert type(back) is cls
    assert str(back) == str(exc) and back.args == exc.args
    assert vars(back) == vars(exc)                  # attributes and __notes__
    assert isinstance(back, cls.__mro__[1])


def test_out_of_memory_keeps_its_numbers():
    exc = SAMPLES[errors.OutOfMemoryError]()
    back = pickle.loads(pickle.dumps(exc))
    assert (back.size, back.total, back.limit, back.device_name, back.detail) == (
        1 << 20, 3 << 20, 4 << 20, "llvmpipe", "pool limit reached")
    assert str(back) == ("out of device memory allocating 1048576 bytes on 'llvmpipe' "
                         "(3145728 bytes held, limit 4194304): pool limit reached")
    assert isinstance(back, MemoryError)


def _raise_out_of_memory():
    raise errors.OutOfMemoryError(64, "a device", "driver said no", total=128)


def test_an_error_raised_in_a_worker_process_arrives_whole():
    """What joblib and Dask do: the child pickles the exception, the parent re-raises it."""
    ctx = multiprocessing.get_context("spawn")       # no forked Vulkan state in the child
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        with pytest.raises(errors.OutOfMemoryError) as info:
            pool.submit(_raise_out_of_memory).result(timeout=120)
    assert (info.value.size, info.value.total, info.value.limit) == (64, 128, None)
    assert "allocating 64 bytes on 'a device' (128 bytes held): driver said no" in str(info.value)
