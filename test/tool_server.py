"""A fork server for the tools the lit files run, so that a RUN line does not pay an interpreter start.

Each lit file starts sbpc's tools and FileCheck 2–20 times; a start is ~0.4 s of imports (xDSL's
builtin dialect, sbpc's dialects, numpy) for ~0.05 s of work: half of the default test run.
Under `python -m pytest`, test/conftest.py starts one server per worker (`python tool_server.py
SOCKET BIN`, in lit's environment; it detaches, so it is not the worker's child) and puts BIN first
on lit's PATH. The server imports every tool's `main` once (the console-script entry points,
`TOOLS`) and writes a launcher per tool into BIN. A launcher (`python -IS`: no site, ~15 ms) sends
its argv, working directory, environment and file descriptors 0–2 to the server; the server forks;
the child takes them over, runs the tool's `main` as its console script would, exits through the
interpreter's normal shutdown (threads, atexit, buffered streams) and last sends the exit status the
launcher exits with. The children share nothing: each is a fresh copy of the server, which runs no
tool itself.

`lit test/` (and `SBPC_TEST_FORK=0 python -m pytest`) runs the real executables.
"""

from __future__ import annotations

import atexit
import json
import os
import random
import selectors
import socket
import stat
import sys
import traceback
from collections.abc import Callable
from importlib.metadata import entry_points

TOOLS = ("sbp-opt", "sbp-run", "sbp-translate", "sbp-solve", "filecheck")
"""The console scripts served (the rest of a RUN line starts real processes)."""

LAUNCHER = """#!{python} -IS
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect({path!r})
head = json.dumps({{"tool": {tool!r}, "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
fds = []
for fd in (0, 1, 2):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        fds.append(os.open(os.devnull, os.O_RDWR))
socket.send_fds(s, [len(head).to_bytes(4, "big") + head], fds)
status = s.recv(4)
if len(status) < 4:
    sys.stderr.write("{tool}: the test tool server's child died without an exit status\\n")
    os._exit(1)
os._exit(int.from_bytes(status, "big"))
"""


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    size = int.from_bytes(data[:4], "big")
    while len(data) < 4 + size:
        more = conn.recv(1 << 16)
        if not more:
            raise ConnectionError("launcher closed before its request was complete")
        data += more
    return json.loads(data[4 : 4 + size]), fds


def _child(conn: socket.socket, mains: dict[str, Callable[[], object]]) -> None:
    """Become the tool: take the launcher's descriptors, directory, environment and argv, run its
    `main`, and leave by SystemExit (the normal shutdown) after arranging the status report."""
    request, fds = _receive(conn)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for target, name in enumerate(("stdin", "stdout", "stderr")):  # new streams, as a new interpreter has
        old = getattr(sys, name)
        new = open(target, "r" if target == 0 else "w", encoding=old.encoding, errors=old.errors, closefd=False,
                   buffering=1 if target == 2 or os.isatty(target) else -1)  # 1: line-buffered
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update(request["env"])  # type: ignore[arg-type]
    sys.argv = list(request["argv"])  # type: ignore[arg-type]
    random.seed()  # a fresh process seeds from the OS, not from its parent's state
    status = 1

    def report() -> None:  # registered first, so it runs after every handler the tool registers
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        conn.sendall(status.to_bytes(4, "big"))

    atexit.register(report)
    try:
        code = mains[str(request["tool"])]()
    except SystemExit as leaving:
        code = leaving.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code & 0xFF
    else:
        print(code, file=sys.stderr)
        status = 1
    raise SystemExit(status)


def serve(path: str, bin_dir: str) -> None:
    """Serve launches on the Unix socket `path` until stdin (a pipe from the test worker) closes."""
    mains = {ep.name: ep.load() for ep in entry_points(group="console_scripts") if ep.name in TOOLS}
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(64)
    for tool in mains:
        launcher = os.path.join(bin_dir, tool)
        with open(launcher, "w") as out:
            out.write(LAUNCHER.format(python=sys.executable, path=path, tool=tool))
        os.chmod(launcher, os.stat(launcher).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    if os.fork() != 0:
        os._exit(0)  # detach: the worker's children are its tests' (the torch tests count them)
    print("ready", flush=True)
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    events.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _ in events.select(timeout=1.0):
            if key.fileobj is sys.stdin:
                return  # the worker is gone
            conn, _ = listener.accept()
            if os.fork() == 0:
                events.close()
                listener.close()
                _child(conn, mains)
            conn.close()
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
