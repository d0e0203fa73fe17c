"""Starts a real tensord for the Python client's tests and opens a session on it.

The binary is $TENSORD_BINARY (ctest sets it) or build/tensord. PyTorch 1.13 (Debian's
python3-torch) is the oracle: tests import it as `torch` and the client as `tensord`.
"""
import os
import signal
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "client", "python"))

import tensord  # noqa: E402
import tensord_process  # noqa: E402


@pytest.fixture(scope="session")
def server():
    """A tensord started for the tests, or the one at $TENSORD_EXTERNAL_SERVER (e.g. a
    container: scripts/container-test.sh), which the tests then neither start nor stop."""
    external = os.environ.get("TENSORD_EXTERNAL_SERVER")
    if external:
        os.environ["TENSORD_ADDRESS"] = external
        yield external
        return
    proc, address = tensord_process.start("--session-ttl=600s")
    os.environ["TENSORD_ADDRESS"] = address
    yield address
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0


@pytest.fixture(scope="session")
def session(server):
    """The tests' session. $TENSORD_TEST_DEVICE (e.g. cuda) makes it the session's default
    device, so that the same differential tests run on a GPU (test_cuda.py runs them so)."""
    s = tensord.connect(server, device=os.environ.get("TENSORD_TEST_DEVICE") or None)
    tensord.set_default_session(s)
    yield s
    s.close()


def pytest_runtest_logreport(report):
    """$TENSORD_FAILURE_LOG: each failure's report appended to that file as it happens, so that
    a run killed at a time limit (scripts/gpu-check.sh on a lent GPU) still tells what failed.
    Under pytest-xdist the worker writes it, not the controller (whose reports carry `node`)."""
    path = os.environ.get("TENSORD_FAILURE_LOG")
    if not path or not report.failed or getattr(report, "node", None) is not None:
        return
    text = report.longreprtext
    if len(text) > 6000:
        text = text[:2000] + "\n[...]\n" + text[-4000:]
    with open(path, "a") as f:
        f.write(f"==== {report.nodeid} ({report.when}) "
                f"[{os.environ.get('TENSORD_TEST_DEVICE') or 'default device'}]\n{text}\n\n")
