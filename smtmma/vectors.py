"""Test-vector files: JSON Lines, one dot-product test per line.

The format (``../shared/DESIGN.md``, "Test-vector files")::

    {"arch": "sm90", "instr": "f16f32", "a": ["3c00", "1400"], "b": ["3c00", "1400"],
     "c": "00000000", "d": "3f800008"}

* ``arch``, ``instr`` (names or aliases), ``a``, ``b`` (lists of K hex
  strings in the instruction's A/B formats), ``c`` (hex in the C format) are
  required;
* ``d`` is the expected output in the D format (for models that round to
  E8M13, the FP32 container: 8 hex digits); absent or null when the line only
  holds inputs;
* ``op`` (op family, e.g. ``mma``/``wgmma``/``tcgen05``/``mfma``, or a full
  instruction name; absent means the catalogue default), ``scale_a``,
  ``scale_b`` (block-scaled instructions: ceil(K / block) hex values in the
  scale format each), ``expect`` (expected D per candidate model: an object of
  hex strings), ``gpu``, ``note`` (free text) are optional; unknown fields are
  ignored.  A known field (or a model of ``expect``) given twice makes the
  line bad: which of the two is the record is anyone's guess.

Hex is unprefixed or ``0x``-prefixed, case-insensitive; a TF32 value may be
given as 8 hex digits, an FP32 container whose 13 trailing bits are dropped
(the hardware ignores them).

:func:`parse_line` turns a line into a :class:`TestVector` or raises an
:class:`~smtmma.errors.InputError` whose one-line message names the line and
the field (``line 7: a[3]: malformed hex 'xyz' ...``).  :func:`iter_vectors`
reads a file (``-``: standard input; UTF-8, an initial byte-order mark and
CRLF line ends accepted) and yields, per non-blank line, the vector or the
error, so a checker can keep going past bad lines: bad JSON or UTF-8, JSON
nested too deeply or with a number of thousands of digits, a line over
:data:`MAX_LINE_BYTES`.  Error messages never echo more than a few dozen
characters of the input.  :func:`dump_vector` writes a line.
"""

from __future__ import annotations

import functools
import io
import json
import re
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO, Callable, Iterator, Mapping, Optional, Sequence, Union

from .catalogue import Entry, lookup, resolve_arch, resolve_instr
from .errors import InputError, InputTypeError, NotRepresentableError, SmtmmaError
from .formats import Format, carried_in, clip, format_hex, get_format, named_pattern, parse_hex, patterns
from .models import Model
from .simulate import output_format

__all__ = [
    "TestVector",
    "VectorFormats",
    "LineError",
    "parse_line",
    "parse_record",
    "iter_vectors",
    "read_vectors",
    "open_bytes",
    "dump_vector",
    "vector_formats",
    "REQUIRED_FIELDS",
    "MAX_LINE_BYTES",
    "json_echo",
]

#: Fields every line must have.
REQUIRED_FIELDS = ("arch", "instr", "a", "b", "c")

_HEX_LIST = re.compile(r"[0-9a-fA-F]+(?:,[0-9a-fA-F]+)*")


@dataclass(frozen=True)
class VectorFormats:
    """Formats of the fields of a vector for one catalogue row."""

    a: Format
    b: Format
    c: Format
    d: Format  # the format D is written in (E8M13 results: the FP32 container)
    scale: Optional[Format]
    block: Optional[int]


def vector_formats(entry: Union[Entry, Model]) -> VectorFormats:
    """The formats in which a vector for ``entry`` (a catalogue row or a model) spells a, b, c, d and scales."""
    m = entry if isinstance(entry, Model) else entry.model
    out = output_format(m)
    return VectorFormats(
        a=get_format(m.a_fmt),
        b=get_format(m.b_fmt),
        c=get_format(m.c_fmt),
        d=carried_in(out),
        scale=get_format(m.scale_fmt) if m.scale_fmt else None,
        block=m.block if m.scale_fmt else None,
    )


@dataclass(frozen=True)
class TestVector:
    """One parsed line: canonical names and bit patterns (Python ints).

    ``op`` is the op family of the catalogue row the line runs on (the
    default family when the line has no ``op``); ``raw`` is the JSON object
    as read; ``line`` counts from 1.
    """

    __test__ = False  # not a pytest test class

    line: int
    arch: str
    instr: str
    op: str
    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int
    d: Optional[int] = None
    scale_a: Optional[tuple[int, ...]] = None
    scale_b: Optional[tuple[int, ...]] = None
    expect: Mapping[str, int] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def K(self) -> int:
        """Length of the dot product."""
        return len(self.a)

    @property
    def entry(self) -> Entry:
        """The catalogue row of ``(arch, instr, op)``."""
        return lookup(self.arch, self.instr, self.op)

    @property
    def formats(self) -> VectorFormats:
        """Formats of the fields."""
        return vector_formats(self.entry)

    def to_json(self) -> str:
        """The line in test-vector format (canonical names, lowercase zero-padded hex)."""
        extra = {k: v for k, v in self.raw.items() if k not in _KNOWN_FIELDS}
        raw_op = self.raw.get("op")
        return dump_vector(
            self.arch, self.instr, self.a, self.b, self.c, self.d,
            op=self.op if raw_op else None, scale_a=self.scale_a, scale_b=self.scale_b,
            expect=self.expect or None, gpu=self.raw.get("gpu"), note=self.raw.get("note"), **extra,
        )


@dataclass(frozen=True)
class LineError:
    """A line that could not be parsed: its number and the one-line message."""

    line: int
    message: str


_KNOWN_FIELDS = ("arch", "instr", "op", "a", "b", "c", "d", "scale_a", "scale_b", "expect", "gpu", "note")


#: Longest line read, in bytes; a longer one is one bad line, skipped without being held in memory.
MAX_LINE_BYTES = 1 << 26

#: Longest arch, instr, op or model name accepted (names are echoed in error messages).
MAX_NAME_CHARS = 200

_UTF8_BOM = b"\xef\xbb\xbf"


def json_echo(value: object) -> str:
    """``value`` as JSON for an error message, clipped to a few dozen characters."""
    try:
        text = json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        text = type(value).__name__
    return clip(text, quote=False)


class _DuplicateKeys(dict):  # type: ignore[type-arg]
    """A JSON object in which some keys appear more than once (``duplicates``; the last value is kept)."""

    duplicates: tuple[str, ...] = ()


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` hook: a dict, marked when a key repeats."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    marked = _DuplicateKeys(obj)
    seen: set[str] = set()
    marked.duplicates = tuple(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
    return marked


def _refuse_duplicates(obj: Mapping[str, Any], line: int, where: str = "") -> None:
    """A line whose known field (or expect's model) is given twice is ambiguous: refuse it; other keys are ignored."""
    dupes = getattr(obj, "duplicates", ())
    bad = [k for k in dupes if where or k in _KNOWN_FIELDS]
    if bad:
        what = f"{where}: model {clip(bad[0])}" if where else f"field {clip(bad[0])}"
        raise InputError(f"line {line}: {what} appears more than once")


def _err(line: int, fieldname: str, msg: str) -> InputError:
    return InputError(f"line {line}: {fieldname}: {msg}")


def _strip_field(msg: str, fieldname: str) -> str:
    """``msg`` without a leading ``"<field>: "`` (the core repeats the field name)."""
    prefix = f"{fieldname}: "
    return msg[len(prefix):] if msg.startswith(prefix) else msg


def _hex_one(fmt: Format, value: object, line: int, fieldname: str) -> int:
    if not isinstance(value, str):
        raise _err(line, fieldname, f"expected a hex string of {fmt.name}, got {json_echo(value)}")
    try:
        return parse_hex(fmt, value, field=fieldname)
    except NotRepresentableError as e:
        raise NotRepresentableError(f"line {line}: {fieldname}: {_strip_field(str(e), fieldname)}") from None
    except InputError as e:
        raise _err(line, fieldname, _strip_field(str(e), fieldname)) from None


_STRUCT_CODE = {2: "B", 4: "H", 8: "I", 16: "Q"}


def _hex_list_fast(fmt: Format, values: list[str], joined: str) -> Optional[tuple[int, ...]]:
    """Patterns of equal-width hex strings of 2/4/8/16 digits via bytes.fromhex; None if the fast path does not apply."""
    width = len(values[0])
    code = _STRUCT_CODE.get(width)
    if code is None or len(joined) != width * len(values) or len(set(map(len, values))) != 1:
        return None
    try:
        raw = bytes.fromhex(joined)
    except ValueError:
        return None
    if len(raw) * 2 != len(joined):  # fromhex skipped whitespace (or widths differ): let the slow path judge
        return None
    out: tuple[int, ...] = struct.unpack(f">{len(values)}{code}", raw)
    if fmt.container is not None and width == get_format(fmt.container).hex_digits and width > fmt.hex_digits:
        return tuple(x >> fmt.container_shift for x in out)
    if fmt.bits < 4 * width and max(out) >> fmt.bits:
        return None
    return out


def _hex_list(fmt: Format, values: object, line: int, fieldname: str, *, length: Optional[int] = None) -> tuple[int, ...]:
    """A list of hex strings; fast path for well-formed lists, exact messages from the slow path."""
    if not isinstance(values, list):
        raise _err(line, fieldname, f"expected a list of hex strings of {fmt.name}, got {json_echo(values)}")
    if not values:
        raise _err(line, fieldname, "must not be empty (a dot product needs K >= 1 values)")
    if length is not None and len(values) != length:
        raise _err(line, fieldname, f"has {len(values)} values, expected {length}")
    try:
        joined = "".join(values)
    except TypeError:
        joined = None
    if joined is not None:
        fast = _hex_list_fast(fmt, values, joined)
        if fast is not None:
            return fast
    if joined is not None and _HEX_LIST.fullmatch(",".join(values)):
        ints = [int(v, 16) for v in values]
        if fmt.container is not None:
            cdig = get_format(fmt.container).hex_digits
            if cdig > fmt.hex_digits:
                ints = [x >> fmt.container_shift if len(v) == cdig else x for x, v in zip(ints, values)]
        if max(ints) >> fmt.bits == 0:
            return tuple(ints)
    return tuple(_hex_one(fmt, v, line, f"{fieldname}[{i}]") for i, v in enumerate(values))


@functools.lru_cache(maxsize=1024)
def _resolve_cached(arch_name: str, instr_name: str, op: Optional[str]) -> tuple[str, str, Entry, VectorFormats]:
    try:
        arch = resolve_arch(arch_name)
    except SmtmmaError as e:
        raise _Field("arch", str(e)) from None
    try:
        instr = resolve_instr(instr_name)
    except SmtmmaError as e:
        raise _Field("instr", str(e)) from None
    try:
        entry = lookup(arch, instr, None)
    except SmtmmaError as e:
        raise _Field("instr", str(e)) from None
    if op:
        try:
            entry = lookup(arch, instr, op)
        except SmtmmaError as e:
            raise _Field("op", str(e)) from None
    return arch, instr, entry, vector_formats(entry)


class _Field(Exception):
    """Internal: a name error and the field it belongs to (cached lookups carry no line)."""

    def __init__(self, fieldname: str, msg: str) -> None:
        super().__init__(fieldname, msg)
        self.fieldname, self.msg = fieldname, msg


def _resolve(arch_name: str, instr_name: str, op: Optional[str], line: int) -> tuple[str, str, Entry, VectorFormats]:
    """Canonical arch, instr, the catalogue row and the field formats; errors name line and field."""
    try:
        return _resolve_cached(arch_name, instr_name, op)
    except _Field as e:
        raise _err(line, e.fieldname, e.msg) from None


def parse_record(obj: object, line: int = 1) -> TestVector:
    """A :class:`TestVector` from a decoded JSON object (see the module docstring)."""
    if not isinstance(obj, dict):
        raise InputError(f"line {line}: expected a JSON object, got {type(obj).__name__}")
    _refuse_duplicates(obj, line)
    missing = [f for f in REQUIRED_FIELDS if f not in obj]
    if missing:
        raise InputError(
            f"line {line}: missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
            f" (required: {', '.join(REQUIRED_FIELDS)})"
        )
    for name in ("arch", "instr"):
        if not isinstance(obj[name], str):
            raise _err(line, name, f"expected a string, got {json_echo(obj[name])}")
        if len(obj[name]) > MAX_NAME_CHARS:
            raise _err(line, name, f"{clip(obj[name])} is too long for a name")
    op = obj.get("op")
    if op is not None and not isinstance(op, str):
        raise _err(line, "op", f"expected a string, got {json_echo(op)}")
    if op is not None and len(op) > MAX_NAME_CHARS:
        raise _err(line, "op", f"{clip(op)} is too long for a name")
    arch, instr, entry, fm = _resolve(obj["arch"], obj["instr"], op or None, line)
    a = _hex_list(fm.a, obj["a"], line, "a")
    b = _hex_list(fm.b, obj["b"], line, "b")
    if len(a) != len(b):
        raise InputError(f"line {line}: a and b have different lengths ({len(a)} and {len(b)} values)")
    c = _hex_one(fm.c, obj["c"], line, "c")
    d_raw = obj.get("d")
    d = None if d_raw is None else _hex_one(fm.d, d_raw, line, "d")
    scale_a = scale_b = None
    if fm.scale is not None:
        need = -(-len(a) // (fm.block or 1))
        for name in ("scale_a", "scale_b"):
            if obj.get(name) is None:
                raise _err(
                    line, name,
                    f"missing; {instr} needs {need} {fm.scale.name} scale(s) (one per {fm.block} values)",
                )
        scale_a = _hex_list(fm.scale, obj["scale_a"], line, "scale_a", length=need)
        scale_b = _hex_list(fm.scale, obj["scale_b"], line, "scale_b", length=need)
    else:
        for name in ("scale_a", "scale_b"):
            if obj.get(name) is not None:
                raise _err(line, name, f"{instr} is not block-scaled (no scales allowed)")
    expect_raw = obj.get("expect")
    expect: dict[str, int] = {}
    if expect_raw is not None:
        if not isinstance(expect_raw, dict):
            raise _err(line, "expect", f"expected an object of model name -> hex {fm.d.name}, got {json_echo(expect_raw)}")
        _refuse_duplicates(expect_raw, line, "expect")
        for k, v in expect_raw.items():
            if not isinstance(k, str):  # a dict built in Python, not JSON (whose keys are strings)
                raise _err(line, "expect", f"model names must be strings, got {type(k).__name__} {clip(repr(k), quote=False)}")
            if len(k) > MAX_NAME_CHARS:
                raise _err(line, "expect", f"model name {clip(k)} is too long")
            expect[str(k)] = _hex_one(fm.d, v, line, f"expect[{json.dumps(k)}]")
    return TestVector(
        line=line, arch=arch, instr=instr, op=entry.op, a=a, b=b, c=c, d=d,
        scale_a=scale_a, scale_b=scale_b, expect=expect, raw=obj,
    )


def parse_line(text: Union[str, bytes], line: int = 1) -> TestVector:
    """A :class:`TestVector` from one JSON line; :class:`InputError` naming line and field otherwise."""
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise InputTypeError(f"line must be a line number (an int >= 1), got {line!r}")
    if not isinstance(text, (str, bytes)):
        raise InputTypeError(f"a test-vector line is a str (or UTF-8 bytes) of JSON, got {type(text).__name__}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"line {line}: not UTF-8 text (byte {e.start})") from None
    try:
        obj = json.loads(text.rstrip("\r\n"), object_pairs_hook=_json_object)
    except json.JSONDecodeError as e:
        raise InputError(f"line {line}: bad JSON: {e.msg} at column {e.colno}") from None
    except RecursionError:
        raise InputError(f"line {line}: bad JSON: nested too deeply") from None
    except ValueError:  # an integer literal past Python's int/str digit limit
        raise InputError(f"line {line}: bad JSON: a number with too many digits") from None
    return parse_record(obj, line)


def open_bytes(path: Union[str, Path]) -> tuple[BinaryIO, bool]:
    """The byte stream of a test-vector file ``path`` (``-``: standard input) and whether the caller closes it;
    InputError (one line) when it cannot be opened."""
    if not isinstance(path, (str, Path)):  # an int would be taken as a file descriptor
        raise InputTypeError(f"a test-vector file is a path (str or Path), got {type(path).__name__}")
    if str(path) == "-":
        stdin = sys.stdin
        if stdin is None:
            raise InputError("-: no standard input")
        buffer = getattr(stdin, "buffer", None)
        return (buffer if buffer is not None else io.BytesIO(stdin.read().encode("utf-8"))), False
    try:
        return open(path, "rb"), True
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a test-vector file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None


def _check_start(first: bytes, name: str) -> bytes:
    """The first line without a UTF-8 byte-order mark; a compressed or UTF-16 file is refused as a whole."""
    if first.startswith(b"\x1f\x8b"):
        raise InputError(f"{name}: gzip-compressed; decompress it first (zcat {name} | smtmma check -)")
    if first.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{name}: UTF-16 text; test-vector files are UTF-8")
    return first[len(_UTF8_BOM):] if first.startswith(_UTF8_BOM) else first


def _raw_lines(fh: BinaryIO, name: str) -> Iterator[tuple[int, Optional[bytes]]]:
    """(number, bytes) per line of ``fh``; bytes is None for a line over :data:`MAX_LINE_BYTES` (skipped unread)."""
    n = 0
    while True:
        try:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            n += 1
            if n == 1:
                raw = _check_start(raw, name)
            if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
                yield n, raw
                continue
            while raw and not raw.endswith(b"\n"):
                raw = fh.readline(1 << 20)
        except OSError as e:
            raise InputError(f"{name}: cannot read line {n + 1} ({e.strerror or e})") from None
        yield n, None


def iter_vectors(path: Union[str, Path],
                 reread: Optional[Callable[[bytes, int, InputError], TestVector]] = None
                 ) -> Iterator[Union[TestVector, LineError]]:
    """Per non-blank line of ``path``: its :class:`TestVector`, or a :class:`LineError`.

    ``path`` ``-`` reads standard input.  A UTF-8 byte-order mark at the
    start and CRLF line ends are accepted.  Raises :class:`InputError` if
    the file cannot be opened or read (missing, a directory, unreadable,
    compressed, UTF-16); a bad line (bad JSON or UTF-8, too deeply nested,
    over :data:`MAX_LINE_BYTES`, a bad field) never stops the iteration.
    ``reread(raw, n, error)``, when given, has a second go at a line the
    reader refused (its bytes, number and error) and returns its vector or
    raises.
    """
    fh, owned = open_bytes(path)
    name = "<stdin>" if str(path) == "-" else str(path)
    try:
        for n, raw in _raw_lines(fh, name):
            if raw is None:
                yield LineError(n, f"line {n}: longer than {MAX_LINE_BYTES} bytes")
                continue
            if not raw.strip():
                continue
            try:
                try:
                    item: Union[TestVector, LineError] = parse_line(raw, n)
                except InputError as e:
                    if reread is None:
                        raise
                    item = reread(raw, n, e)  # a second reading of a line the first refused
            except SmtmmaError as e:
                item = LineError(n, str(e))
            yield item
    finally:
        if owned:
            fh.close()


def read_vectors(path: Union[str, Path]) -> list[TestVector]:
    """Every vector of ``path``; raises the first line's :class:`InputError`."""
    out = []
    for v in iter_vectors(path):
        if isinstance(v, LineError):
            raise InputError(f"{path}: {v.message}")
        out.append(v)
    return out


def _hex_values(fmt: Format, values: Sequence[int], name: str) -> list[str]:
    return [format_hex(fmt, x) for x in patterns(fmt, values, name)]


def _hex(fmt: Format, value: int, name: str) -> str:
    return format_hex(fmt, named_pattern(fmt, value, name))


def dump_vector(
    arch: str,
    instr: str,
    a: Sequence[int],
    b: Sequence[int],
    c: int,
    d: Optional[int] = None,
    *,
    op: Optional[str] = None,
    scale_a: Optional[Sequence[int]] = None,
    scale_b: Optional[Sequence[int]] = None,
    expect: Optional[Mapping[str, int]] = None,
    gpu: Optional[str] = None,
    note: Optional[str] = None,
    file: Optional[IO[str]] = None,
    **extra: Any,
) -> str:
    """One test-vector line (no trailing newline) from bit patterns; also written to ``file`` with a newline.

    Names are written canonically (``h100`` -> ``sm90``), hex lowercase and
    zero-padded to the field's format (:func:`~smtmma.formats.format_hex`).
    ``op`` is written only when given; ``d`` only when not None.  ``extra``
    keys are appended as they are (JSON-serializable values).
    """
    arch_c, instr_c = resolve_arch(arch), resolve_instr(instr)
    entry = lookup(arch_c, instr_c, op)
    fm = vector_formats(entry)
    hex_a, hex_b = _hex_values(fm.a, a, "a"), _hex_values(fm.b, b, "b")
    if len(a) != len(b):
        raise InputError(f"a and b have different lengths ({len(a)} and {len(b)} values)")
    if not len(a):
        raise InputError("a and b are empty: a dot product has at least one lane")
    rec: dict[str, Any] = {"arch": arch_c, "instr": instr_c}
    if op:
        rec["op"] = entry.op if op.strip().lower() in (entry.op, "wmma") else op
    rec["a"], rec["b"] = hex_a, hex_b
    rec["c"] = _hex(fm.c, c, "c")
    if d is not None:
        rec["d"] = _hex(fm.d, d, "d")
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s is not None:
            if fm.scale is None:
                raise InputError(f"{name}: {instr_c} is not block-scaled (no scales allowed)")
            rec[name] = _hex_values(fm.scale, s, name)
    if expect:
        if not isinstance(expect, Mapping):
            raise InputTypeError(f"expect maps model names to D bit patterns, got {type(expect).__name__}")
        rec["expect"] = {str(k): _hex(fm.d, v, f"expect[{k}]") for k, v in expect.items()}
    if gpu is not None:
        rec["gpu"] = gpu
    if note is not None:
        rec["note"] = note
    for k, v in extra.items():
        rec.setdefault(k, v)
    try:
        text = json.dumps(rec, separators=(", ", ": "))
    except (TypeError, ValueError) as e:
        raise InputTypeError(f"a field of the vector is not JSON data: {e}") from None
    try:  # what is written must read back: scales, lengths and expectations as parse_line checks them
        parse_line(text)
    except InputError as e:
        raise InputError(f"the vector would not read back: {str(e).removeprefix('line 1: ')}") from None
    if file is not None:
        if not hasattr(file, "write"):
            raise InputTypeError(f"file must be an open text file, got {type(file).__name__}")
        file.write(text + "\n")
    return text
