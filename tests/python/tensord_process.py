"""Starts a tensord process for a test: the binary is $TENSORD_BINARY (ctest sets it) or
build/tensord; the address is read from its first line of output."""
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start(*flags, stderr=None, listen="127.0.0.1:0"):
    """Returns (process, address) of a tensord listening on `listen` (a free port) with
    `flags`."""
    binary = os.environ.get("TENSORD_BINARY", os.path.join(ROOT, "build", "tensord"))
    proc = subprocess.Popen([binary, f"--listen={listen}", *flags], stdout=subprocess.PIPE,
                            stderr=stderr, text=True)
    line = proc.stdout.readline()
    match = re.search(r"listening on (\S+)", line)
    if not match:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"tensord did not start: {line!r}")
    return proc, match.group(1)
