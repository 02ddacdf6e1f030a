"""Argument types for the ``vrs-edu`` command: every argument is checked while the command line is parsed, before
any work starts.

Each function here is an ``argparse`` ``type=``: it returns the converted value or raises
``argparse.ArgumentTypeError`` with what was given and what is expected; argparse then prints one line naming the
argument (``vrs-edu train: error: argument --corpus: '/tmp' is a directory; expected a UTF-8 text file``) and
exits with status 2. Checks that need several arguments at once raise :class:`UsageError` from a command's
``check`` function, which ``main`` turns into the same kind of line. To validate a new flag, give it one of these
types (or a new function of the same shape).
"""
from __future__ import annotations

import argparse
import codecs
import json
import os
import tempfile
import types
import typing
from pathlib import Path

from vrs_edu.lab.corpora import Corpus, get_corpus
from vrs_edu.lab.train import TrainConfig
from vrs_edu.nn.model import TinyGPTConfig

Invalid = argparse.ArgumentTypeError


class UsageError(ValueError):
    """A combination of arguments that cannot work; ``str(e)`` names the arguments."""


def _number(text: str, kind, minimum, what: str):
    try:
        value = kind(text)
    except ValueError:
        raise Invalid(f"{text!r} is not {what}") from None
    if value != value or (minimum is not None and value < minimum):   # NaN, or below the minimum
        raise Invalid(f"{text!r} is not {what}")
    return value


def positive_int(text: str) -> int:
    return _number(text, int, 1, "a whole number >= 1")


def natural_int(text: str) -> int:
    return _number(text, int, 0, "a whole number >= 0")


def positive_float(text: str) -> float:
    value = _number(text, float, 0, "a number of seconds > 0")
    if value <= 0 or value == float("inf"):
        raise Invalid(f"{text!r} is not a number of seconds > 0")
    return value


def int_list(text: str) -> str:
    """``"0,1,2"``: whole numbers >= 0, comma-separated (returned as given, spaces removed)."""
    try:
        out = [int(s) for s in text.split(",")]
    except ValueError:
        raise Invalid(f"{text!r} is not a comma-separated list of whole numbers (e.g. 0,1,2)") from None
    if not out or any(s < 0 for s in out):
        raise Invalid(f"{text!r} is not a comma-separated list of whole numbers >= 0 (e.g. 0,1,2)")
    return ",".join(map(str, out))


def seed_list(text: str) -> str:
    """:func:`int_list` with every seed distinct: a repeated seed would train the same run twice and count it as two
    (a spread of 0 and an interval of no width, decided from one run)."""
    seeds = int_list(text)
    seen: set[int] = set()
    for s in map(int, seeds.split(",")):
        if s in seen:
            raise Invalid(f"{text!r} repeats seed {s}; expected distinct seeds (e.g. 0,1,2): a repeated seed trains "
                          "the same run twice")
        seen.add(s)
    return seeds


def _existing(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.exists():
        raise Invalid(f"{text!r} does not exist" + (" (a broken link)" if path.is_symlink() else ""))
    return path


def text_file(text: str) -> str:
    """An existing, readable UTF-8 text file (read through once here, so a binary file is refused now)."""
    path = _existing(text)
    if path.is_dir():
        raise Invalid(f"{text!r} is a directory; expected a UTF-8 text file")
    try:
        decoder = codecs.getincrementaldecoder("utf-8")()
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
    except PermissionError:
        raise Invalid(f"{text!r} is not readable (permission denied); expected a UTF-8 text file") from None
    except UnicodeDecodeError as e:
        raise Invalid(f"{text!r} is not UTF-8 text (byte {e.start}); expected a UTF-8 text file") from None
    except OSError as e:
        raise Invalid(f"{text!r} cannot be read ({e.strerror}); expected a UTF-8 text file") from None
    return str(path)


def corpus(text: str) -> Corpus:
    """A named corpus (``kjv``, ``python-docs``) or a UTF-8 text file, read and checked once, here: the recipe is
    handed the :class:`~vrs_edu.lab.corpora.Corpus` (:func:`~vrs_edu.lab.corpora.get_corpus` says what is refused:
    a missing file, a folder, an empty, binary or non-UTF-8 file, a file named like a named corpus). Whether the
    text is long enough for a recipe's blocks depends on its tokenizer, and is checked when its data are built."""
    try:
        return get_corpus(text)
    except (OSError, ValueError) as e:
        raise Invalid(str(e)) from None


def input_dir(text: str) -> str:
    """An existing folder whose entries can be listed."""
    path = _existing(text)
    if not path.is_dir():
        raise Invalid(f"{text!r} is a file; expected a folder")
    try:
        os.listdir(path)
    except OSError as e:
        raise Invalid(f"{text!r} cannot be read ({e.strerror}); expected a readable folder") from None
    return str(path)


def input_path(text: str) -> str:
    """An existing file or folder that can be read (a folder: listed)."""
    path = _existing(text)
    try:
        if path.is_dir():
            os.listdir(path)
        else:
            with path.open("rb") as f:
                f.read(1)
    except OSError as e:
        raise Invalid(f"{text!r} cannot be read ({e.strerror})") from None
    return str(path)


def output_dir(text: str) -> str:
    """A folder to write into: an existing writable folder, or a path whose nearest existing parent is a writable
    folder (it is created later, by the command). Writability is tested by creating and removing a temporary
    folder, which also holds for root and read-only mounts, where permission bits say nothing."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise Invalid(f"{text!r} is an existing file; expected a folder (existing or to be created)")
    parent = path
    while not parent.exists():
        if parent.is_symlink():
            raise Invalid(f"{text!r} goes through a broken link {str(parent)!r}; expected a folder")
        parent = parent.parent
    if not parent.is_dir():
        raise Invalid(f"{text!r} is inside {str(parent)!r}, which is a file; expected a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".vrs-edu-write-test-", dir=parent))
    except OSError as e:
        where = "" if parent == path else f" (its nearest existing parent {str(parent)!r} is not writable)"
        raise Invalid(f"cannot write into {text!r}{where}: {e.strerror}; expected a writable folder") from None
    return str(path)


# --- KEY=VALUE settings (``--set``) --------------------------------------------------------------------------

def setting(text: str) -> str:
    """``KEY=VALUE`` with a known model or training setting as KEY and a VALUE of its type (returned as given)."""
    parse_setting(text)
    return text


def parse_setting(text: str) -> tuple[str, object]:
    """``"x0_layers=[8,9]"`` -> ``("x0_layers", (8, 9))``: a JSON value, else the text as a string; lists become
    tuples. The key and the value's type are checked against the model and training settings."""
    key, eq, raw = text.partition("=")
    key = key.strip()
    if not eq or not key:
        raise Invalid(f"{text!r} is not KEY=VALUE (e.g. value_residual=resformer)")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    value = tuple(value) if isinstance(value, list) else value
    hints = setting_types()
    if key not in hints:
        raise Invalid(f"{text!r}: unknown setting {key!r}; expected one of {', '.join(sorted(hints))}")
    if not _conforms(value, hints[key]):
        raise Invalid(f"{text!r}: {key} takes {_describe(hints[key])}, got {raw!r}")
    return key, value


def setting_types() -> dict[str, object]:
    """{setting: type hint} of every model (TinyGPTConfig) and training (TrainConfig) setting."""
    return {**typing.get_type_hints(TinyGPTConfig), **typing.get_type_hints(TrainConfig)}


def _conforms(value, hint) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is type(None):
        return value is None
    if origin is typing.Literal:      # a mode: one of the names its Literal lists (e.g. ValueResidualMode)
        return isinstance(value, str) and value in args
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, a) for a in args)
    if origin is tuple:
        return isinstance(value, tuple) and all(_conforms(v, args[0]) for v in value)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _describe(hint) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is type(None):
        return "null"
    if origin is typing.Literal:
        return "one of " + ", ".join(args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is tuple:
        return f"a list of {_describe(args[0])} (e.g. [1,2])"
    return {int: "a whole number", float: "a number", bool: "true or false", str: "a word"}.get(hint, str(hint))


DEVICE_KINDS = ("auto", "cpu", "cuda", "mps")


def device_name(text: str) -> str:
    """auto | cpu | cuda | cuda:N | mps (whether this machine has it is checked when the command starts)."""
    kind, colon, index = text.strip().lower().partition(":")
    if kind not in DEVICE_KINDS or (colon and (kind != "cuda" or not index.isdigit())):
        raise Invalid(f"{text!r} is not a device; expected auto, cpu, cuda, cuda:N or mps")
    return text


def one_of(names, what: str):
    """A type accepting one of ``names()`` (a function, so that heavy registries load only when the flag is
    used)."""
    def check(text: str) -> str:
        known = list(names())
        if text not in known:
            raise Invalid(f"unknown {what} {text!r}; expected one of {', '.join(known)}")
        return text
    check.__name__ = what
    return check
