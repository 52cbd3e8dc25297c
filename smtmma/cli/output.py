"""Where the commands write: ``-`` for standard output, whole files, and a console that never fails on a character.

Every file a command writes goes through :func:`open_output` (or
:func:`write_output`), after :func:`check_output` has refused a bad name
before any work:

* ``-`` is standard output (text, or bytes through ``sys.stdout.buffer``);
  where a file or a folder is needed, :func:`check_output` refuses it.
* A file is written to a temporary file in its folder (``.NAME.XXXX.part``)
  and renamed onto NAME when done (``os.replace``): two commands writing one
  file cannot interleave (the last to finish wins, whole), and a failed or
  interrupted run leaves the old file as it was -- except with
  ``keep_partial`` (``smtmma run``), where what was done, if anything, is
  renamed into place.  A symbolic link is followed (its target is
  replaced); a device or a pipe (``/dev/null``) is written directly.
* A folder that is not there, a name that is not writable, a full disk: one
  :class:`~smtmma.errors.InputError` line naming the option.

:func:`install_console` (called by :func:`smtmma.cli.main`, never on import)
makes standard output and error replace what their encoding cannot hold
(``PYTHONIOENCODING=ascii``, Latin-1 locales) instead of failing, and
prints warnings as one line without the source excerpt.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
import sys
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator, Optional, TextIO, Union

from ..errors import InputError, InputTypeError
from ..limits import check_output_file

__all__ = ["STDOUT", "is_stdout", "check_output", "output_folder", "open_output", "write_output", "install_console", "one_line_warning"]

#: the name that means standard output
STDOUT = "-"

#: write errors that are the disk's, not the program's
_DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


def is_stdout(path: object) -> bool:
    """True when ``path`` is ``-`` (standard output)."""
    return isinstance(path, str) and path == STDOUT


def check_output(path: object, option: str, hint: str, *, stdout: bool = True, folder: bool = False,
                 binary: bool = False) -> None:
    """Refuse, before any work and in one line, an output ``path`` that cannot be written.

    ``option`` names the option (``-o``), ``hint`` what it takes ("a file
    for D (D.npy)").  ``-`` passes when ``stdout`` (for ``binary`` output
    only when standard output is not a terminal); ``folder``: ``path`` is a
    folder the command creates (an existing file is refused).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"{option} is a file name, got {type(path).__name__}")
    if is_stdout(path):
        if not stdout:
            raise InputError(f"{option} -: standard output cannot take it; give {hint}")
        if binary and _isatty(sys.stdout):
            raise InputError(f"{option} -: standard output is a terminal; redirect it (> FILE) or give {hint}")
        return
    if folder:
        p = Path(path)
        if p.exists() and not p.is_dir():
            raise InputError(f"{option} {path} is a file, not a folder; give {hint}")
        return
    p = Path(path)
    if p.exists() and not p.is_file() and not p.is_dir():  # /dev/null, a named pipe: written directly
        return
    check_output_file(path, option, hint)


def output_folder(path: object, option: str, hint: str) -> Path:
    """The folder ``path`` (an ``-o DIR``), checked as :func:`check_output` does and created; one-line InputError."""
    check_output(path, option, hint, stdout=False, folder=True)
    out = Path(path)  # type: ignore[arg-type]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{option} {path}: cannot create the folder ({e.strerror or e})") from None
    return out


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def _cannot_write(option: str, path: object, e: OSError) -> InputError:
    return InputError(f"{option} {path}: cannot write ({e.strerror or e})")


def _new_file_mode(target: Path) -> int:
    """The permissions ``open(target, "w")`` would give: the old file's, or 0666 less the umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@contextmanager
def open_output(path: Union[str, "os.PathLike[str]"], option: str, *, binary: bool = False,
                keep_partial: bool = False, stdout: Optional[TextIO] = None) -> Iterator[IO[Any]]:
    """A stream for the output ``path``, renamed into place whole when the block ends (``-``: ``stdout``,
    default ``sys.stdout``).

    On an exception in the block the temporary file is removed and ``path``
    left as it was.  With ``keep_partial`` what was written is renamed into
    place, exception or not (which still propagates), and nothing written
    leaves ``path`` as it was.  A write error of the file (full disk, quota)
    becomes one InputError line naming ``option``.
    """
    if is_stdout(path):
        text = stdout if stdout is not None else sys.stdout
        text.flush()  # text printed before the bytes stays before them
        if binary and not hasattr(text, "buffer"):
            raise InputError(f"{option} -: this standard output takes no bytes; give a file name")
        stream: IO[Any] = text.buffer if binary else text
        yield stream
        stream.flush()
        return
    target = Path(os.path.realpath(path))  # a link: replace its target, not the link
    if target.exists() and not target.is_file():  # a device or a pipe: nothing to rename
        try:
            fh = open(target, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"}))
        except OSError as e:
            raise _cannot_write(option, path, e) from None
        try:
            with fh:
                yield fh
        except OSError as e:
            if e.filename is None and e.errno in _DISK_ERRORS:  # /dev/full
                raise _cannot_write(option, path, e) from None
            raise
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    except OSError as e:
        raise _cannot_write(option, path, e) from None
    done = False
    try:
        try:
            with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            done = True
        except OSError as e:
            if e.filename is None and e.errno in _DISK_ERRORS:  # a write of this file, not an error of the block's own
                raise _cannot_write(option, path, e) from None
            raise
    finally:
        if (done and not keep_partial) or (keep_partial and _size(tmp) > 0):
            try:
                os.chmod(tmp, _new_file_mode(target))
                os.replace(tmp, target)
            except OSError as e:
                _remove(tmp)
                if done:
                    raise _cannot_write(option, path, e) from None
        else:
            _remove(tmp)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_output(path: Union[str, "os.PathLike[str]"], data: Union[str, bytes], option: str, *,
                 stdout: Optional[TextIO] = None) -> None:
    """Write ``data`` (text or bytes) to ``path`` whole (``-``: ``stdout``, default ``sys.stdout``); see :func:`open_output`."""
    with open_output(path, option, binary=isinstance(data, bytes), stdout=stdout) as fh:
        fh.write(data)


def one_line_warning(message: Union[Warning, str], category: type[Warning], filename: str, lineno: int,
                     file: Optional[TextIO] = None, line: Optional[str] = None) -> None:
    """A :func:`warnings.showwarning` that prints ``smtmma: warning: MESSAGE`` on one line, no source excerpt."""
    text = " ".join(str(message).split())
    if text.startswith("smtmma: "):
        text = text[len("smtmma: "):]
    stream = file if file is not None else sys.stderr
    try:
        print(f"smtmma: warning: {text}", file=stream)
    except (OSError, ValueError):  # stderr closed: a warning is not worth failing for
        pass


#: the encoding error handler of the console (registered by :func:`install_console`)
_CONSOLE_ERRORS = "smtmma.console"


def install_console() -> None:
    """Make the console safe for the CLI: stdout/stderr replace characters their encoding lacks, warnings one line.

    Called by :func:`smtmma.cli.main` only (never on import): ``→`` or ``≤``
    printed under ``PYTHONIOENCODING=ascii`` or a Latin-1 locale becomes
    ``\\u2192`` instead of a UnicodeEncodeError.
    """
    codecs.register_error(_CONSOLE_ERRORS, _console_escape)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") in ("strict", "surrogateescape"):
            try:
                reconfigure(errors=_CONSOLE_ERRORS)
            except (ValueError, OSError, LookupError):
                pass
    warnings.showwarning = one_line_warning


def _console_escape(e: UnicodeError) -> tuple[bytes, int]:
    """``backslashreplace`` for characters the console lacks (``\\u2192``), ``surrogateescape`` for the bytes of
    an undecodable file name given on the command line (its own bytes again, as Python prints them in a C locale)."""
    if not isinstance(e, UnicodeEncodeError):
        raise e
    out = b"".join(bytes([ord(c) - 0xDC00]) if 0xDC80 <= ord(c) <= 0xDCFF else c.encode("ascii", "backslashreplace")
                   for c in e.object[e.start:e.end])
    return out, e.end
