"""Test-vector lines (smtmma.vectors): parsing, error messages, dumping."""

from __future__ import annotations

import io
import json

import pytest

from smtmma.errors import InputError, NotRepresentableError, UnknownNameError
from smtmma.vectors import LineError, TestVector, dump_vector, iter_vectors, parse_line, parse_record, read_vectors

# The example line of DESIGN.md: 1 + 2^-10 * 2^-10 = 1 + 2^-20 exactly in fp32.
BASE = {"arch": "sm90", "instr": "f16f32", "a": ["3c00", "1400"], "b": ["3c00", "1400"], "c": "00000000", "d": "3f800008"}


def line_with(**changes: object) -> str:
    """BASE with fields replaced (a value of None removes the field)."""
    rec = dict(BASE)
    for k, v in changes.items():
        if v is None:
            rec.pop(k, None)
        else:
            rec[k] = v
    return json.dumps(rec)


def error_of(text: str, line: int = 7) -> InputError:
    with pytest.raises(InputError) as info:
        parse_line(text, line)
    return info.value


# ---------------------------------------------------------------- parsing

def test_parse_example_line():
    v = parse_line(json.dumps(BASE), 3)
    assert v == TestVector(line=3, arch="sm90", instr="f16f32", op="mma", a=(0x3C00, 0x1400), b=(0x3C00, 0x1400),
                           c=0, d=0x3F800008)
    assert v.K == 2
    assert v.entry.model.describe() == "t-fdpa:L=16,F=25,rho=rz-fp32"
    assert v.raw == BASE


def test_aliases_are_canonicalized_and_op_defaults():
    v = parse_line(line_with(arch="H100", instr="fp16fp32"))
    assert (v.arch, v.instr, v.op) == ("sm90", "f16f32", "mma")
    v = parse_line(line_with(op="wgmma"))
    assert v.op == "wgmma"
    v = parse_line(line_with(op="wmma"))  # the WMMA API issues the mma.sync datapath
    assert v.op == "mma"
    v = parse_line(line_with(op=None))
    assert v.op == "mma"


def test_hex_spellings():
    v = parse_line(line_with(a=["0x3C00", "0X1400"], c="0", d="3F800008"))
    assert v.a == (0x3C00, 0x1400) and v.c == 0 and v.d == 0x3F800008


def test_unknown_fields_and_free_text_are_kept_not_checked():
    v = parse_line(line_with(gpu="H100", note="anything", extra={"x": [1, 2]}))
    assert v.raw["extra"] == {"x": [1, 2]}
    assert v.d == 0x3F800008


def test_line_without_d():
    assert parse_line(line_with(d=None)).d is None  # absent
    assert parse_line(json.dumps({**BASE, "d": None})).d is None  # null


def test_expect_is_parsed_in_the_d_format():
    v = parse_line(line_with(expect={"sm80": "3f800000", "sm90": "3f800008"}))
    assert dict(v.expect) == {"sm80": 0x3F800000, "sm90": 0x3F800008}


def test_fp8_values_and_fp16_output():
    v = parse_line(json.dumps({"arch": "sm90", "instr": "e4m3f16", "op": "mma", "a": ["38", "b0"], "b": ["38", "38"],
                               "c": "3c00", "d": "3800"}))
    assert (v.instr, v.a, v.b, v.c, v.d) == ("e4m3e4m3f16", (0x38, 0xB0), (0x38, 0x38), 0x3C00, 0x3800)


def test_e8m13_output_is_the_fp32_container():
    # Hopper wgmma e4m3 -> f32 rounds to E8M13 but delivers 8 hex digits of FP32.
    v = parse_line(json.dumps({"arch": "sm90", "instr": "e4m3f32", "op": "wgmma", "a": ["38"], "b": ["38"],
                               "c": "00000000", "d": "3f800400"}))
    assert v.d == 0x3F800400
    assert v.formats.d.name == "fp32"


def test_tf32_container_rule():
    # 8 hex digits: an FP32 pattern, its 13 low bits dropped as the hardware does.
    v = parse_line(json.dumps({"arch": "sm80", "instr": "tf32f32", "a": ["3f801fff", "1fc00"], "b": ["3f800000", "0"],
                               "c": "3f800000"}))
    assert v.a == (0x1FC00, 0x1FC00)
    assert v.b == (0x1FC00, 0)
    # 5 hex digits are the 19-bit pattern itself; 6 or 7 digits must fit 19 bits.
    e = error_of(json.dumps({"arch": "sm80", "instr": "tf32f32", "a": ["3f8000"], "b": ["1fc00"], "c": "0"}))
    assert str(e) == "line 7: a[0]: '3f8000' has more bits than tf32 (19 bits)"


def test_block_scaled_line():
    rec = {"arch": "sm100", "instr": "mxe4m3f32", "a": ["38"] * 33, "b": ["38"] * 33, "c": "00000000",
           "scale_a": ["7f", "80"], "scale_b": ["7f", "7f"]}
    v = parse_line(json.dumps(rec))
    assert v.scale_a == (0x7F, 0x80) and v.scale_b == (0x7F, 0x7F) and v.op == "tcgen05"
    e = error_of(json.dumps({**rec, "scale_a": ["7f"]}))
    assert str(e) == "line 7: scale_a: has 1 values, expected 2"
    e = error_of(json.dumps({k: v for k, v in rec.items() if k != "scale_b"}))
    assert str(e) == "line 7: scale_b: missing; mxe4m3f32 needs 2 ue8m0 scale(s) (one per 32 values)"
    e = error_of(line_with(scale_a=["7f"]))
    assert str(e) == "line 7: scale_a: f16f32 is not block-scaled (no scales allowed)"


def test_fp64_patterns():
    one = "3ff0000000000000"
    v = parse_line(json.dumps({"arch": "sm80", "instr": "f64f64", "a": [one, "ffffffffffffffff"], "b": [one, one],
                               "c": "0000000000000000"}))
    assert v.a == (0x3FF0000000000000, 0xFFFFFFFFFFFFFFFF)


# ---------------------------------------------------------------- errors: one line, naming line and field

@pytest.mark.parametrize(
    "changes, message",
    [
        ({"c": None}, "line 7: missing field c (required: arch, instr, a, b, c)"),
        ({"a": None, "arch": None}, "line 7: missing fields arch, a (required: arch, instr, a, b, c)"),
        ({"a": ["3c00", "xyz"]}, "line 7: a[1]: malformed hex 'xyz' (expected up to 4 hex digits of fp16)"),
        ({"b": ["3c00", "14 00"]}, "line 7: b[1]: malformed hex '14 00' (expected up to 4 hex digits of fp16)"),
        ({"c": "3f80000g"}, "line 7: c: malformed hex '3f80000g' (expected up to 8 hex digits of fp32)"),
        ({"d": "-1"}, "line 7: d: malformed hex '-1' (expected up to 8 hex digits of fp32)"),
        ({"a": ["3c000", "1400"]}, "line 7: a[0]: '3c000' has more bits than fp16 (16 bits)"),
        ({"d": "13f800008"}, "line 7: d: '13f800008' has more bits than fp32 (32 bits)"),
        ({"a": ["3c00"]}, "line 7: a and b have different lengths (1 and 2 values)"),
        ({"a": "3c00"}, 'line 7: a: expected a list of hex strings of fp16, got "3c00"'),
        ({"b": []}, "line 7: b: must not be empty (a dot product needs K >= 1 values)"),
        ({"a": ["3c00", 5120]}, "line 7: a[1]: expected a hex string of fp16, got 5120"),
        ({"c": 0}, "line 7: c: expected a hex string of fp32, got 0"),
        ({"arch": 90}, "line 7: arch: expected a string, got 90"),
        ({"op": ["mma"]}, 'line 7: op: expected a string, got ["mma"]'),
        ({"instr": "f16f32", "arch": "sm70", "a": ["3c00"] * 2, "op": "wgmma"},
         "line 7: op: sm70 f16f32 has no op 'wgmma'; valid: mma"),
        ({"arch": "sm70", "instr": "bf16f32"}, "line 7: instr: sm70 has no instruction bf16f32; valid for sm70: f16f16, f16f32, f16f32c16"),
        ({"expect": ["3f800000"]}, 'line 7: expect: expected an object of model name -> hex fp32, got ["3f800000"]'),
        ({"expect": {"m1": "zz"}}, "line 7: expect[\"m1\"]: malformed hex 'zz' (expected up to 8 hex digits of fp32)"),
    ],
)
def test_error_messages(changes, message):
    assert str(error_of(line_with(**changes))) == message


def test_too_many_bits_is_not_representable_error():
    e = error_of(line_with(a=["3c000", "1400"]))
    assert isinstance(e, NotRepresentableError)


def test_unknown_arch_lists_valid_names():
    msg = str(error_of(line_with(arch="sm99")))
    assert msg == ("line 7: arch: unknown architecture 'sm99'; did you mean sm90 or sm89? valid: sm70, sm75, sm80, sm86, "
                   "sm89, sm90, sm100, sm103, sm110, sm120, sm121, gfx908, gfx90a, gfx942, gfx950, gfx11, gfx12 "
                   "(and aliases: see 'smtmma list')")
    assert "\n" not in msg


def test_unknown_instr_suggests_close_names():
    msg = str(error_of(line_with(instr="f17f32")))
    assert msg.startswith("line 7: instr: unknown instruction 'f17f32'; did you mean f16f32")
    assert msg.endswith("see 'smtmma list'")


def test_unknown_op_lists_valid_ops():
    assert str(error_of(line_with(op="tcgen05"))) == "line 7: op: sm90 f16f32 has no op 'tcgen05'; valid: mma, wgmma"


@pytest.mark.parametrize(
    "text, message",
    [
        ("{bad json", "line 7: bad JSON: Expecting property name enclosed in double quotes at column 2"),
        ('{"arch": "sm90",', "line 7: bad JSON: Expecting property name enclosed in double quotes at column 17"),
        ("[1, 2]", "line 7: expected a JSON object, got list"),
        ("42", "line 7: expected a JSON object, got int"),
    ],
)
def test_bad_json(text, message):
    assert str(error_of(text)) == message


def test_parse_record_takes_a_decoded_object():
    assert parse_record(dict(BASE), 5).line == 5
    with pytest.raises(InputError, match=r"^line 5: missing field b "):
        parse_record({k: v for k, v in BASE.items() if k != "b"}, 5)


def test_errors_are_catchable_as_builtins():
    with pytest.raises(ValueError):
        parse_line("{", 1)


# ---------------------------------------------------------------- files

def test_iter_vectors_keeps_going(tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_text(
        json.dumps(BASE) + "\n"
        + "\n"  # blank lines are skipped, not counted
        + line_with(c=None) + "\n"
        + "not json\n"
        + line_with(a=["3c00", "1400", "0000"], b=["3c00", "1400", "0000"]) + "\n"
    )
    items = list(iter_vectors(path))
    assert [type(x).__name__ for x in items] == ["TestVector", "LineError", "LineError", "TestVector"]
    assert items[0].line == 1 and items[3].line == 5 and items[3].K == 3
    assert items[1] == LineError(3, "line 3: missing field c (required: arch, instr, a, b, c)")
    assert items[2] == LineError(4, "line 4: bad JSON: Expecting value at column 1")


def test_iter_vectors_non_utf8_line(tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_bytes(json.dumps(BASE).encode() + b"\n\xff\xfe\n")
    items = list(iter_vectors(path))
    assert items[1] == LineError(2, "line 2: not UTF-8 text (byte 0)")


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match=r"no-such\.jsonl: no such file$"):
        list(iter_vectors(tmp_path / "no-such.jsonl"))
    with pytest.raises(InputError, match=r": is a directory, not a test-vector file$"):
        list(iter_vectors(tmp_path))


def test_read_vectors_raises_first_bad_line(tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(BASE) + "\n" + line_with(a=["zz", "1400"]) + "\n")
    with pytest.raises(InputError) as info:
        read_vectors(path)
    assert str(info.value) == f"{path}: line 2: a[0]: malformed hex 'zz' (expected up to 4 hex digits of fp16)"


# ---------------------------------------------------------------- dumping

def test_dump_vector_canonical_lowercase_padded():
    text = dump_vector("h100", "fp16fp32", [0x3C00, 0x14], [0x3C00, 0x1400], 0, 0x3F800008)
    assert text == ('{"arch": "sm90", "instr": "f16f32", "a": ["3c00", "0014"], "b": ["3c00", "1400"], '
                    '"c": "00000000", "d": "3f800008"}')


def test_dump_vector_options_and_file(tmp_path):
    path = tmp_path / "out.jsonl"
    with open(path, "w") as fh:
        text = dump_vector("sm90", "e4m3f32", [0x38], [0x38], 0, op="wgmma", expect={"sm89": 0x3F800000},
                           gpu="H100", note="hand-made", seed=3, file=fh)
    assert path.read_text() == text + "\n"
    assert json.loads(text) == {"arch": "sm90", "instr": "e4m3e4m3f32", "op": "wgmma", "a": ["38"], "b": ["38"],
                                "c": "00000000", "expect": {"sm89": "3f800000"}, "gpu": "H100", "note": "hand-made",
                                "seed": 3}


def test_dump_vector_rejects_bad_values():
    with pytest.raises(NotRepresentableError, match=r"^a\[1\]: 0x10000 has more bits than fp16 \(16 bits\)$"):
        dump_vector("sm90", "f16f32", [0, 0x10000], [0, 0], 0)
    with pytest.raises(InputError, match=r"^a and b have different lengths \(1 and 2 values\)$"):
        dump_vector("sm90", "f16f32", [0], [0, 0], 0)
    with pytest.raises(UnknownNameError, match=r"^unknown architecture 'sm1'"):
        dump_vector("sm1", "f16f32", [0], [0], 0)


def test_round_trip_through_dump_and_parse():
    v = parse_line(line_with(arch="hopper", op="wgmma", a=["3C00", "0x1400"], gpu="H100", note="n", seed=1))
    again = parse_line(v.to_json(), v.line)
    assert again == v
    assert json.loads(v.to_json()) == {"arch": "sm90", "instr": "f16f32", "op": "wgmma", "a": ["3c00", "1400"],
                                       "b": ["3c00", "1400"], "c": "00000000", "d": "3f800008", "gpu": "H100",
                                       "note": "n", "seed": 1}


def test_round_trip_tf32_and_block_scales():
    v = parse_line(json.dumps({"arch": "sm80", "instr": "tf32f32", "a": ["3f800000"], "b": ["1fc00"], "c": "0"}))
    assert json.loads(v.to_json())["a"] == ["1fc00"]  # written as the 19-bit pattern: 5 hex digits
    assert parse_line(v.to_json()) == v
    rec = {"arch": "sm100", "instr": "nvf4f32", "a": ["2"] * 16, "b": ["2"] * 16, "c": "0",
           "scale_a": ["38"], "scale_b": ["30"], "d": "41000000"}
    v = parse_line(json.dumps(rec))
    assert parse_line(v.to_json()) == v


# ---------------------------------------------------------------- hostile input: one bad line, short messages

@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000, "line 7: bad JSON: nested too deeply"),
        ('{"c": ' + "9" * 5000 + "}", "line 7: bad JSON: a number with too many digits"),
        ("null", "line 7: expected a JSON object, got NoneType"),
        (line_with()[:-1] + ', "a": ["3c00"]}', "line 7: field 'a' appears more than once"),
        (line_with(expect={"sm80": "0"})[:-2] + ', "sm80": "1"}}', "line 7: expect: model 'sm80' appears more than once"),
        (line_with(c=[1] * 100_000), "line 7: c: expected a hex string of fp32, got [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1... "
                                     "(300000 characters)"),
        (line_with(instr="f" * 1000), "line 7: instr: 'ffffffffffffffffffffffffffffffff'... (1000 characters) is too "
                                      "long for a name"),
        (line_with(op=["mma"]), 'line 7: op: expected a string, got ["mma"]'),
    ],
    ids=["deep", "bigint", "null", "dup-field", "dup-expect", "long-list", "long-name", "op-list"],
)
def test_hostile_lines_are_one_short_error(text, message):
    e = error_of(text)
    assert str(e) == message and len(str(e)) < 200


def test_duplicate_unknown_fields_are_ignored_like_any_unknown_field():
    v = parse_line(line_with()[:-1] + ', "seed": 1, "seed": 2}')
    assert v.c == 0 and v.raw["seed"] == 2


def test_iter_vectors_bom_crlf_and_stdin(tmp_path, monkeypatch):
    data = b"\xef\xbb\xbf" + json.dumps(BASE).encode() + b"\r\n\r\n" + line_with(c=None).encode() + b"\r\n"
    path = tmp_path / "v.jsonl"
    path.write_bytes(data)
    items = list(iter_vectors(path))
    assert isinstance(items[0], TestVector) and items[1] == LineError(3, "line 3: missing field c (required: arch, instr, a, b, c)")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert list(iter_vectors("-")) == items
    monkeypatch.setattr("sys.stdin", io.StringIO(data.decode("utf-8")))  # no .buffer: read as text
    assert list(iter_vectors("-")) == items


class _FailingStream(io.BytesIO):
    """A stream whose second read fails, like a file on a vanished network drive."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads = 0

    def readline(self, size: int = -1) -> bytes:  # type: ignore[override]
        self.reads += 1
        if self.reads > 1:
            raise OSError(5, "Input/output error")
        return super().readline(size)


def test_read_error_part_way_keeps_the_lines_read(monkeypatch):
    from smtmma import check, vectors

    monkeypatch.setattr(vectors, "open_bytes", lambda path: (_FailingStream(((json.dumps(BASE) + "\n") * 2).encode()), False))
    r = check.check_file("flaky.jsonl")
    assert (r.lines, r.matched, r.error) == (1, 1, "cannot read line 2 (Input/output error)")
    assert not r.ok
