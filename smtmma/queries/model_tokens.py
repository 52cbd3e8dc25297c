"""Model tokens of ``distinguish`` (architectures, model specs or :class:`Model` objects) resolved to models of one instruction."""

from __future__ import annotations

from typing import Optional, Sequence, Union

from ..catalogue import INSTRS, entries, model_of, resolve_arch, resolve_instr
from ..errors import InputError, SmtmmaError, UnknownNameError, spell
from ..formats import clip
from ..models import Model, canonical_kind, parse_model_spec


Token = Union[str, Model]

__all__ = ["Token", "is_spec_token", "resolve_models", "token_name"]


def token_name(token: Token) -> str:
    """How a token is named in results: the text given, or a Model's spec."""
    return token.describe() if isinstance(token, Model) else token


def is_spec_token(token: Token) -> bool:
    """A model spec: a Model, has a ':', or is a bare model kind that is not an architecture name (fma, e-fdpa)."""
    if isinstance(token, Model):
        return True
    if not isinstance(token, str):
        raise InputError(f"a model is an architecture name, a model spec or a Model, not {type(token).__name__}")
    if ":" in token:
        return True
    try:
        resolve_arch(token)
        return False
    except UnknownNameError:
        return canonical_kind(token) is not None


def _arch_of(token: str, what: str) -> str:
    try:
        return resolve_arch(token)
    except UnknownNameError as e:
        raise UnknownNameError(f"{what}: {e}; or give a model spec with a ':' (e.g. t-fdpa:F=26)") from None


def _check_shared_instr(archs: Sequence[str], instr: str) -> None:
    """Every architecture must have ``instr``; otherwise list the instructions they share."""
    have = {a: {e.instr for e in entries(a)} for a in archs}
    missing = [a for a in archs if instr not in have[a]]
    if not missing:
        return
    shared = sorted(set.intersection(*have.values()), key=list(INSTRS).index)
    who = ", ".join(dict.fromkeys(archs))
    raise UnknownNameError(
        f"{', '.join(dict.fromkeys(missing))} {'has' if len(set(missing)) == 1 else 'have'} no instruction {instr}; "
        f"instructions shared by {who}: {', '.join(shared) if shared else 'none'}"
    )


def resolve_models(tokens: Sequence[Token], instr_name: str, op: Optional[str], like: Optional[str]) -> tuple[
        str, list[Model], Optional[str], Optional[str]]:
    """(canonical instr, models, the first architecture among the models or None, the test vector's arch or None).

    The vector's arch is the first architecture among the models, else ``like``.

    Architectures give the catalogue model of (arch, instr, op); specs are
    parsed against the model of ``like`` or of the first architecture; a
    :class:`Model` is taken as it is, and must read and write the formats of
    ``instr``.
    """
    instr = resolve_instr(instr_name)
    is_spec = [is_spec_token(t) for t in tokens]
    archs = {t: _arch_of(t, f"model {t!r}") for t, s in zip(tokens, is_spec) if not s}
    like_arch = _arch_of(like, "--like") if like else None
    _check_shared_instr([*archs.values(), *([like_arch] if like_arch else [])], instr)
    first_arch = next((archs[t] for t, s in zip(tokens, is_spec) if not s), None)
    base_arch = like_arch or first_arch
    text_specs = any(s and not isinstance(t, Model) for t, s in zip(tokens, is_spec))
    if text_specs and base_arch is None:
        raise InputError(f"model specs need operand formats: name an architecture among the models or give "
                         f"{spell('like', shown='ARCH')} (e.g. {spell('like', 'sm80')}: the specs take the {instr} formats "
                         "and parameters of sm80)")
    like_model = model_of(base_arch, instr, op) if text_specs and base_arch is not None else None
    models = []
    for t, s in zip(tokens, is_spec):
        if isinstance(t, Model):
            models.append(model_of(t, instr))  # refuses a model of other formats than instr's
        elif s:
            assert like_model is not None
            try:
                models.append(parse_model_spec(t, like=like_model))
            except SmtmmaError as e:
                raise type(e)(f"model {clip(t)}: {e}") from None
        else:
            models.append(model_of(archs[t], instr, op))
    return instr, models, first_arch, first_arch or base_arch

