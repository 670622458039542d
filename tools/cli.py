"""What the three drivers share on the command line: the `--version` text, "did you mean" for an
unknown flag, progress lines for long steps, and writing `-o OUT`.

argparse (3.11) reports an unknown flag without a suggestion and, when a required option group is
also unsatisfied, reports only that; `SuggestingParser` names the unknown flag first, with the
closest known one.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any, NoReturn

from sbpc import __version__


def version_format(tool: str) -> str:
    """The `--version` line of `tool` (xDSL's `VersionAction` fills in `xdsl_version`)."""
    return f"{tool} (sbpc) {__version__}, built on xdsl {{xdsl_version}}"


def version_text(tool: str) -> str:
    return version_format(tool).format(xdsl_version=version("xdsl"))


class VersionAction(argparse.Action):
    """`--version`: print `version_text(tool)` and exit 0."""

    def __init__(self, *args: Any, tool: str, **kwargs: Any):
        super().__init__(*args, nargs=0, **kwargs)
        self.tool = tool

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(version_text(self.tool))
        parser.exit()


class SuggestingParser(argparse.ArgumentParser):
    """An argument parser whose errors name an unknown flag first, with "did you mean --X?"."""

    usage_status = 2
    """The exit code of a usage error (argparse's 2; sbp-run's errors all exit 1)."""

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None):  # type: ignore[override]
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        argv = getattr(self, "_argv", [])
        unknown = unknown_flags(self, argv)
        if unknown:
            message = "unrecognized arguments: " + ", ".join(
                f"{flag} (did you mean {hint}?)" if hint else flag for flag, hint in unknown)
        elif message.startswith("unrecognized arguments: "):
            quoted = cut_pipeline(argv, message.removeprefix("unrecognized arguments: ").split(" "))
            if quoted is not None:
                message += f" (a pass pipeline with a space in it is cut there by the shell: quote it, {quoted})"
        self.print_usage(sys.stderr)
        self.exit(self.usage_status, f"{self.prog}: error: {message}\n")


def unknown_flags(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[tuple[str, str | None]]:
    """Each `-x`/`--xyz` in `argv` that is no option of `parser` (nor a prefix argparse would accept),
    with the closest option's spelling if one is close."""
    known = list(parser._option_string_actions)
    found: list[tuple[str, str | None]] = []
    for token in argv:
        if token == "--":
            break
        if not token.startswith("-") or token == "-" or _is_number(token):
            continue
        name = token.split("=", 1)[0]
        if name in known or (name.startswith("--") and any(k.startswith(name) for k in known)):
            continue
        if not name.startswith("--") and len(name) > 2 and name[:2] in known:  # `-ofile`, `-pa,b`
            continue
        close = difflib.get_close_matches(name, [k for k in known if k.startswith("--")], n=1, cutoff=0.6)
        found.append((name, close[0] if close else None))
    return found


def cut_pipeline(argv: Sequence[str], extra: Sequence[str]) -> str | None:
    """The quoted form of a pass pipeline the shell split at a space (`-p infer-sbp{rule=global` then
    `mem=12.5MiB}`), e.g. `-p 'infer-sbp{rule=global mem=12.5MiB}'`; None if no pipeline was split."""
    for i, token in enumerate(argv):
        flag, value = token.split("=", 1) if token.startswith("--") and "=" in token else ("", token)
        depth = value.count("{") - value.count("}")
        end = i + 1
        if depth > 0:  # an unclosed `{`: the pieces up to the one that closes it
            while end < len(argv) and depth > 0:
                depth += argv[end].count("{") - argv[end].count("}")
                end += 1
        elif flag and "=" in value:  # `--infer-sbp=rule=global mem=12.5MiB`: the options after it
            while end < len(argv) and argv[end] in extra and "=" in argv[end] and not argv[end].startswith("-"):
                end += 1
        if end == i + 1:
            continue
        joined = " ".join([value, *argv[i + 1 : end]])
        if flag:
            return f"{flag}='{joined}'"
        if i >= 1 and argv[i - 1].startswith("-"):
            return f"{argv[i - 1]} '{joined}'"
    return None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def write_output(path: str, text: str) -> str | None:
    """Write `text` to the file `path`; the error message if it cannot be written, else None."""
    if not path:
        return "error: -o '': an empty file name (give a file, or '-' for stdout)"
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        return f"error: cannot write {path}: {error.strerror or error}"
    return None


class Progress:
    """Progress lines on stderr around long steps: `TOOL: WHAT... done in T s`.

    With `--progress` every step is shown from its start; otherwise, when stderr is a terminal, a
    step's line appears once it has run `DELAY` seconds (short steps print nothing); else (stderr
    captured, as in tests) never, so outputs stay stable."""

    DELAY = 2.0

    def __init__(self, tool: str, requested: bool, stream: IO[str] | None = None):
        self.tool = tool
        self.stream = stream if stream is not None else sys.stderr
        self.always = requested
        self.enabled = requested or bool(getattr(self.stream, "isatty", lambda: False)())
        self._open: list[AbstractContextManager[None]] = []
        self._lock = threading.Lock()
        self._line_open: str | None = None
        """The step whose `TOOL: WHAT...` line waits for its end."""
        self._interrupted: set[str] = set()

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        """Show `what` around the body (a step inside another ends the outer's line; the outer's end
        then repeats its name)."""
        if not self.enabled:
            yield
            return
        started = time.perf_counter()
        shown = threading.Event()

        def start() -> None:
            with self._lock:
                if self._line_open is not None:  # an outer step's line: end it, its end repeats the name
                    self.stream.write("\n")
                    self._interrupted.add(self._line_open)
                self.stream.write(f"{self.tool}: {what}...")
                self.stream.flush()
                self._line_open = what
                shown.set()

        timer = threading.Timer(self.DELAY, start)
        timer.daemon = True
        if self.always:
            start()
        else:
            timer.start()
        outcome = "failed"
        try:
            yield
            outcome = f"done in {time.perf_counter() - started:.1f} s"
        finally:
            timer.cancel()
            with self._lock:
                if shown.is_set():
                    if self._line_open == what and what not in self._interrupted:
                        self.stream.write(f" {outcome}\n")
                    else:
                        if self._line_open is not None and self._line_open != what:
                            self.stream.write("\n")
                        self.stream.write(f"{self.tool}: {what}... {outcome}\n")
                    self._interrupted.discard(what)
                    self._line_open = None
                    self.stream.flush()

    def passes(self, callback: Callable[[Any, Any, Any], None]) -> Callable[[Any, Any, Any], None]:
        """A pass-pipeline callback that runs `callback` and shows each pass as a step (`close`
        ends the step of a pass that raised)."""

        def between(previous: Any, module: Any, following: Any) -> None:
            if self._open:
                self._open.pop().__exit__(None, None, None)
            callback(previous, module, following)
            if following is not None:
                functions = [f"@{op.sym_name.data}" for op in module.ops if op.name == "func.func"]
                step = self.step(f"{following.pipeline_pass_spec()} on {', '.join(functions) or 'the module'}")
                step.__enter__()
                self._open.append(step)

        return between

    def close(self) -> None:
        """End, as failed, the step of a pass that did not return."""
        while self._open:
            failure = RuntimeError("the pass did not return")
            self._open.pop().__exit__(type(failure), failure, None)
