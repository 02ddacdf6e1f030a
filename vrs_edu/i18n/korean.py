"""Korean particles that depend on the word before them: 은/는, 이/가, 을/를, 과/와, 으로/로, 이다/다 …

A particle's form depends on whether the preceding syllable, *as read aloud*, ends in a consonant (받침). Computed
prose substitutes numbers, Latin letters and English names (``V``, ``x0``, ``0.032``, ``SmolLM2``), so the
reading of a digit or a letter decides: ``V``는 (브이), ``x0``은 (엑스영), ``3``을 (삼), ``2``를 (이).
For ``으로/로``, a final ㄹ counts as no consonant (``1``로, 일로). A hand-written rule because the particle libraries
on PyPI (tossi, hgtk) read Hangul and digits only, and the course's words are mostly Latin letters and numbers.
"""
from __future__ import annotations

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
RIEUL = 8  # the final-consonant index of ㄹ in a precomposed Hangul syllable

# The last syllable of a digit, a power of ten and a Latin letter as Koreans read them, e.g. 3 -> 삼, V -> 브이.
DIGIT_SOUND = dict(zip("0123456789", "영일이삼사오육칠팔구"))
POWER_SOUND = {1: "십", 2: "백", 3: "천", 4: "만"}
LETTER_SOUND = dict(zip("abcdefghijklmnopqrstuvwxyz",
                        ["이", "비", "씨", "디", "이", "프", "지", "치", "이", "이", "이", "엘", "엠",
                         "엔", "오", "피", "큐", "알", "스", "티", "유", "이", "유", "스", "이", "트"]))
PAIRS = {"은/는", "이/가", "을/를", "과/와", "으로/로", "이다/다", "이나/나", "이라고/라고", "아/야"}


def last_sound(word: str) -> str:
    """The last syllable of ``word`` as read aloud (Hangul as written; digits, powers of ten and Latin letters by
    their Korean reading); trailing punctuation, markup and spaces are skipped. ValueError for a word with none."""
    text = word.rstrip(" )]}'\"`*_.,;:!?")
    if text.endswith("%"):
        return "트"  # 퍼센트
    if not text:
        raise ValueError(f"word: expected a word with a letter, digit or Hangul syllable, got {word!r}")
    last = text[-1]
    if HANGUL_FIRST <= ord(last) <= HANGUL_LAST:
        return last
    if last.isdigit():
        digits = text.split(".")[-1] if "." in text[-4:] else text
        stripped = digits.rstrip("0")
        zeros = len(digits) - len(stripped)
        if zeros and stripped and "." not in text:  # 10 -> 십, 300 -> 백, 2000 -> 천
            return POWER_SOUND.get(zeros, "만")
        return DIGIT_SOUND[last]
    if last.lower() in LETTER_SOUND:
        return LETTER_SOUND[last.lower()]
    raise ValueError(f"word: expected it to end in a letter, digit or Hangul syllable, got {word!r}")


def _final_consonant(syllable: str) -> int:
    return (ord(syllable) - HANGUL_FIRST) % 28


def particle(word: str, pair: str) -> str:
    """The form of the particle ``pair`` ("with consonant/without", e.g. ``"은/는"``) that follows ``word``.

    >>> particle("V", "은/는"), particle("x0", "은/는"), particle("3", "을/를"), particle("1", "으로/로")
    ('는', '은', '을', '로')
    """
    if pair not in PAIRS:
        raise ValueError(f"pair: expected one of {', '.join(sorted(PAIRS))}, got {pair!r}")
    with_consonant, without = pair.split("/")
    final = _final_consonant(last_sound(word))
    if pair == "으로/로" and final == RIEUL:
        return without
    return with_consonant if final else without


def attach(word: str, pair: str) -> str:
    """``word`` followed by its particle: ``attach("V", "은/는") == "V는"``."""
    return word + particle(word, pair)
