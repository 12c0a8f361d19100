"""Translations, Persian digits and dates, without a global ``_``.

Persian (fa) is the bot's first language; English (en) the second. Messages are written
in English in the source and translated through Babel catalogs, one domain ``hokm``::

    locales/<lang>/LC_MESSAGES/hokm.po      (compiled in memory, or hokm.mo if newer)

Pick a translator per recipient (the group's language for the table, the user's for
private messages) and pass it along, named ``tr`` or bound to a local ``_`` so that
``pybabel extract`` (see babel.cfg for the command) finds the messages::

    _ = get_translator(chat.language)
    text = _("Hand {n}", n=4)  # «دور ۴» — numeric arguments get Persian digits
    text = _.ngettext("{n} point", "{n} points", 2)

Keyword arguments are formatted with ``str.format`` (numbers through
:meth:`Translator.format_number`); without them the message is returned as is. Mark
strings that are translated later with :func:`N_`. Card glyphs such as ``A♠`` inside
Persian text go through :func:`ltr`.

Checking the catalogs (tests and CI)::

    python -m telegram_bot.chat.i18n check    # non-zero exit on untranslated, fuzzy, missing
                                         # or unused entries, or placeholder mismatches

Locales are read from ``HOKM_LOCALES_DIR`` if set, else ``locales/`` at the repo root.
"""

from __future__ import annotations

import argparse
import gettext as _gettext
import io
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

DOMAIN = "hokm"
LANGUAGES = ("fa", "en")
DEFAULT_LANGUAGE = "fa"

# The bot's package (this module is in its chat/ layer): the messages are marked there.
PACKAGE_DIR = Path(__file__).resolve().parents[1]
LRI, PDI = "\u2066", "\u2069"  # left-to-right isolate ... pop directional isolate
RLI, FSI = "\u2067", "\u2068"  # right-to-left isolate, first-strong isolate
LRM, RLM = "\u200e", "\u200f"  # left-to-right and right-to-left marks

PERSIAN_DIGITS = "۰۱۲۳۴۵۶۷۸۹"
_TO_PERSIAN = str.maketrans("0123456789", PERSIAN_DIGITS)
_TO_ASCII = str.maketrans(PERSIAN_DIGITS + "٠١٢٣٤٥٦٧٨٩", "0123456789" * 2)

# Iran has kept UTC+03:30 all year since 2022; a fixed offset needs no tz database.
TEHRAN = timezone(timedelta(hours=3, minutes=30), "IRST")
PERSIAN_MONTHS = (
    "فروردین",
    "اردیبهشت",
    "خرداد",
    "تیر",
    "مرداد",
    "شهریور",
    "مهر",
    "آبان",
    "آذر",
    "دی",
    "بهمن",
    "اسفند",
)
ENGLISH_MONTHS = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)

# Telegram language codes read as Persian: Persian itself, Dari (prs) and Pashto (ps),
# whose speakers in Afghanistan commonly read Persian.
_PERSIAN_CODES = ("fa", "prs", "ps")


# ---------------------------------------------------------------------------- helpers


def N_(message: str) -> str:
    """Mark ``message`` for extraction without translating it (translate it later)."""
    return message


def ltr(text: object) -> str:
    """Wrap ``text`` in a left-to-right isolate (U+2066 … U+2069).

    For card glyphs (``10♥``), signed numbers (``+۱۰۰``) and other runs that are always
    left to right inside Persian text, so that the rank and the suit, or the sign and
    the digits, do not flip. Names go through :func:`isolate`.
    """
    return f"{LRI}{text}{PDI}"


def isolate(name: object) -> str:
    """Wrap a person's name in a first-strong isolate (U+2068 … U+2069).

    The name keeps its own direction (its first strong letter decides: «سارا» right to
    left, "Maryam" left to right) and does not turn the line around it: without it,
    «Maryam: ۱ امتیاز · ۶ دست» is laid out left to right and shows the parts reversed.
    """
    return f"{FSI}{name}{PDI}"


def to_persian_digits(text: object) -> str:
    """Every ASCII digit of ``text`` as a Persian digit (۰-۹)."""
    return str(text).translate(_TO_PERSIAN)


def to_ascii_digits(text: object) -> str:
    """Persian (۰-۹) and Arabic-Indic (٠-٩) digits back to ASCII: for parsing user input."""
    return str(text).translate(_TO_ASCII)


def language_from_telegram(code: str | None) -> str:
    """The bot language ('fa' | 'en') for a Telegram ``language_code``.

    'fa', 'fa-IR', 'prs' (Dari) and 'ps' (Pashto) give 'fa'; so does no code at all,
    since Persian is the product's first language and the bot lives in Persian groups.
    Any other code gives 'en': someone whose Telegram is set to German or Turkish is
    more likely to read English than Persian. Users can always choose in the settings.
    """
    if not code:
        return DEFAULT_LANGUAGE
    primary = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    if primary in _PERSIAN_CODES:
        return "fa"
    return "en"


def normalize_language(language: str | None) -> str:
    """'fa' or 'en' for a supported language tag ('en-US' -> 'en'); anything else -> 'fa'."""
    if language:
        primary = re.split(r"[-_]", language.strip().lower(), maxsplit=1)[0]
        if primary in LANGUAGES:
            return primary
    return DEFAULT_LANGUAGE


def user_language(chosen: str | None, telegram_code: str | None) -> str:
    """A user's language: the one they chose, else the one Telegram reports."""
    if chosen in LANGUAGES:
        return chosen  # type: ignore[return-value]
    return language_from_telegram(telegram_code)


def default_locales_dir() -> Path:
    """``HOKM_LOCALES_DIR`` if set, else the ``locales`` folder at the repo root."""
    configured = os.environ.get("HOKM_LOCALES_DIR", "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    return PACKAGE_DIR.parent / "locales"


def catalog_path(locales_dir: str | Path, language: str, ext: str = "po") -> Path:
    return Path(locales_dir) / language / "LC_MESSAGES" / f"{DOMAIN}.{ext}"


# ---------------------------------------------------------------------------- loading

_cache: dict[Path, dict[str, _gettext.NullTranslations]] = {}
_translators: dict[tuple[Path, str], Translator] = {}
#: (HOKM_LOCALES_DIR, language as asked) -> translator, for get_translator's fast path.
_by_language: dict[tuple[str, str | None], Translator] = {}
_lock = threading.Lock()


def _compile_po(po_path: Path, language: str) -> _gettext.NullTranslations:
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from babel.support import Translations

    with po_path.open("rb") as f:
        catalog = read_po(f, locale=language, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)  # fuzzy entries are not translations
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)


def _load_language(locales_dir: Path, language: str) -> _gettext.NullTranslations | None:
    from babel.support import Translations

    po = catalog_path(locales_dir, language, "po")
    mo = catalog_path(locales_dir, language, "mo")
    if mo.is_file() and (not po.is_file() or mo.stat().st_mtime_ns > po.stat().st_mtime_ns):
        with mo.open("rb") as f:
            return Translations(f, domain=DOMAIN)
    if po.is_file():
        return _compile_po(po, language)
    return None


def load_translations(
    locales_dir: str | Path | None = None, *, reload: bool = False
) -> dict[str, _gettext.NullTranslations]:
    """The catalogs of every language found in ``locales_dir``, by language code.

    Each ``<lang>/LC_MESSAGES/hokm.po`` is read with Babel and compiled in memory; a
    ``hokm.mo`` beside it is used instead when it is newer than the ``.po``. The result
    is cached per folder (``reload=True`` reads the files again).
    """
    directory = Path(locales_dir).resolve() if locales_dir else default_locales_dir()
    with _lock:
        if not reload and directory in _cache:
            return _cache[directory]
        catalogs: dict[str, _gettext.NullTranslations] = {}
        if directory.is_dir():
            for child in sorted(directory.iterdir()):
                if child.is_dir() and (child / "LC_MESSAGES").is_dir():
                    loaded = _load_language(directory, child.name)
                    if loaded is not None:
                        catalogs[child.name] = loaded
        _cache[directory] = catalogs
        for key in [k for k in _translators if k[0] == directory]:
            del _translators[key]
        _by_language.clear()
        return catalogs


def clear_cache() -> None:
    """Forget every loaded catalog and translator (for tests and reloading)."""
    with _lock:
        _cache.clear()
        _translators.clear()
        _by_language.clear()


# ---------------------------------------------------------------------------- Translator


class Translator:
    """Translations and number/date formatting for one language.

    ``translator(msg, **kwargs)`` is ``translator.gettext(msg, **kwargs)``.
    """

    def __init__(self, lang: str, translations: _gettext.NullTranslations | None = None) -> None:
        self.lang = lang
        self._translations = translations or _gettext.NullTranslations()

    def __repr__(self) -> str:
        return f"Translator({self.lang!r})"

    @property
    def is_rtl(self) -> bool:
        return self.lang == "fa"

    def _format(self, text: str, kwargs: dict[str, Any]) -> str:
        if not kwargs:
            return text
        values = {
            key: self.format_number(value) if _is_number(value) else value
            for key, value in kwargs.items()
        }
        return text.format(**values)

    def gettext(self, message: str, /, **kwargs: Any) -> str:
        """The translation of ``message``, formatted with ``kwargs`` if any are given."""
        return self._format(self._translations.gettext(message), kwargs)

    __call__ = gettext

    def ngettext(self, singular: str, plural: str, n: int, /, **kwargs: Any) -> str:
        """The singular or plural translation for ``n``, formatted with ``n`` and ``kwargs``."""
        text = self._translations.ngettext(singular, plural, n)
        return self._format(text, {"n": n, **kwargs})

    def pgettext(self, context: str, message: str, /, **kwargs: Any) -> str:
        """The translation of ``message`` in ``context`` (msgctxt)."""
        return self._format(self._translations.pgettext(context, message), kwargs)

    def format_number(self, number: int | float | Decimal, grouping: bool = True) -> str:
        """``number`` with this language's digits: ۱٬۲۳۴ in Persian, 1,234 in English."""
        text = f"{number:,}" if grouping else f"{number}"
        if self.lang != "fa":
            return text
        negative = text.startswith("-")
        text = text.lstrip("-").replace(",", "٬").replace(".", "٫")
        text = to_persian_digits(text)
        # A left-to-right isolate keeps the minus sign on the left of the digits.
        return f"{LRI}−{text}{PDI}" if negative else text

    def digits(self, text: object) -> str:
        """``text`` with every ASCII digit in Persian for 'fa'; unchanged for 'en'."""
        return to_persian_digits(text) if self.lang == "fa" else str(text)

    def date(self, value: date | datetime, tz: timezone | None = None) -> str:
        """A date for this language: «۱ آذر ۱۴۰۵» (Solar Hijri) or "22 Nov 2026".

        An aware datetime is first converted to ``tz``: by default Tehran time for
        Persian and UTC for English. Naive datetimes and dates are taken as they are.
        """
        if isinstance(value, datetime):
            if value.tzinfo is not None:
                value = value.astimezone(tz or (TEHRAN if self.lang == "fa" else UTC))
            value = value.date()
        if self.lang == "fa":
            import jdatetime

            jalali = jdatetime.date.fromgregorian(date=value)
            text = f"{jalali.day} {PERSIAN_MONTHS[jalali.month - 1]} {jalali.year}"
            return to_persian_digits(text)
        return f"{value.day} {ENGLISH_MONTHS[value.month - 1]} {value.year}"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def get_translator(language: str | None, locales_dir: str | Path | None = None) -> Translator:
    """The (cached) translator for ``language``; unknown languages fall back to Persian."""
    if locales_dir is None:
        # The common case, asked several times a press: by the language as given,
        # without normalizing it or resolving the folder again.
        fast = (os.environ.get("HOKM_LOCALES_DIR", ""), language)
        translator = _by_language.get(fast)
        if translator is not None:
            return translator
    lang = normalize_language(language)
    directory = Path(locales_dir).resolve() if locales_dir else default_locales_dir()
    key = (directory, lang)
    translator = _translators.get(key)
    if translator is None:
        catalogs = load_translations(directory)
        translator = Translator(lang, catalogs.get(lang))
        _translators[key] = translator
    if locales_dir is None:
        if len(_by_language) >= 1024:  # language codes come from users: bounded
            _by_language.clear()
        _by_language[fast] = translator
    return translator


# ---------------------------------------------------------------------------- checking

_FORMAT_FIELD = re.compile(r"\{([^{}]*)\}")
_PERCENT_FIELD = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0+\-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa])"
)


def placeholders(text: str) -> Counter[str]:
    """The ``{name}`` and ``%(name)s`` / ``%s`` placeholders in ``text``, counted.

    ``{{``/``}}`` and ``%%`` are literal. Format specs are ignored (``{n:>3}`` is ``{n}``).
    """
    found: Counter[str] = Counter()
    braces = text.replace("{{", "").replace("}}", "")
    for match in _FORMAT_FIELD.finditer(braces):
        name = re.split(r"[!:]", match.group(1), maxsplit=1)[0].strip()
        found["{" + name + "}"] += 1
    percents = text.replace("%%", "")
    for match in _PERCENT_FIELD.finditer(percents):
        key = match.group("key")
        found[f"%({key})" if key is not None else "%" + match.group("conv")] += 1
    return found


def _same_placeholders(a: Counter[str], b: Counter[str]) -> bool:
    # Named placeholders may repeat or be reordered; positional ones must match in count.
    if set(a) != set(b):
        return False
    return all(a[k] == b[k] for k in a if k in ("{}",) or not k.startswith(("{", "%(")))


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a catalog."""

    language: str
    kind: str  # 'missing-catalog' | 'unreadable' | 'untranslated' | 'fuzzy' | 'missing' | 'unused' | 'placeholders' | 'plural-forms'
    msgid: str
    detail: str = ""

    def __str__(self) -> str:
        where = f"{self.language}: {self.kind}"
        text = f"{where}: {self.msgid!r}" if self.msgid else where
        return f"{text} ({self.detail})" if self.detail else text


def _key(message_id: str | Sequence[str], context: str | None) -> tuple[str, str | None]:
    return (message_id if isinstance(message_id, str) else message_id[0], context)


# Besides Babel's defaults (_, N_, gettext, ngettext, pgettext, ...): a translator held
# in a variable named ``tr``, as render.py does. Keep in step with babel.cfg's command.
EXTRA_KEYWORDS = ("tr",)


def extract_source_messages(
    source_dir: str | Path | None = None,
) -> dict[tuple[str, str | None], tuple[str, int]]:
    """Messages marked in the bot's source (as ``pybabel extract`` would find them).

    Returns ``{(msgid, msgctxt): (file, line)}`` for ``telegram_bot/`` by default.
    """
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir

    keywords = {**DEFAULT_KEYWORDS, **{k: None for k in EXTRA_KEYWORDS}}
    directory = Path(source_dir) if source_dir else PACKAGE_DIR
    found: dict[tuple[str, str | None], tuple[str, int]] = {}
    if not directory.is_dir():
        return found
    for filename, lineno, message, _comments, context in extract_from_dir(
        directory, method_map=[("**.py", "python")], keywords=keywords
    ):
        msgid = message if isinstance(message, str) else message[0]
        if msgid:
            found.setdefault((msgid, context), (filename, lineno))
    return found


def check_catalogs(
    locales_dir: str | Path | None = None,
    languages: Iterable[str] = LANGUAGES,
    source_dir: str | Path | None = None,
    check_source: bool = True,
) -> list[Problem]:
    """Everything that keeps the catalogs from being complete and correct.

    For each language: its ``.po`` must exist and parse; no entry may be untranslated
    or fuzzy; each translation must use the same placeholders as its msgid (``{name}``,
    ``%(name)s``); plural entries need every form. Entries of ``locales/hokm.pot`` and,
    with ``check_source``, messages marked in the source under ``source_dir`` (default
    ``telegram_bot/``) must all be in every catalog and, with ``check_source``, every
    catalog entry must be one of them (no unused entries). Returns [] when all is well.
    """
    from babel.messages.pofile import read_po

    directory = Path(locales_dir) if locales_dir else default_locales_dir()
    expected: dict[tuple[str, str | None], str] = {}
    template = directory / f"{DOMAIN}.pot"
    problems: list[Problem] = []
    if template.is_file():
        try:
            with template.open("rb") as f:
                for message in read_po(f, domain=DOMAIN):
                    if message.id:
                        expected.setdefault(_key(message.id, message.context), "hokm.pot")
        except Exception as error:
            problems.append(Problem("pot", "unreadable", "", f"{template}: {error}"))
    if check_source:
        for key, (filename, lineno) in extract_source_messages(source_dir).items():
            expected.setdefault(key, f"{filename}:{lineno}")

    for language in languages:
        po = catalog_path(directory, language)
        if not po.is_file():
            problems.append(Problem(language, "missing-catalog", "", str(po)))
            continue
        try:
            with po.open("rb") as f:
                catalog = read_po(f, locale=language, domain=DOMAIN)
        except Exception as error:
            problems.append(Problem(language, "unreadable", "", f"{po}: {error}"))
            continue
        present: set[tuple[str, str | None]] = set()
        for message in catalog:
            if not message.id:
                continue  # the header
            key = _key(message.id, message.context)
            present.add(key)
            problems.extend(_check_message(language, catalog.num_plurals, message))
        for key, origin in sorted(expected.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
            if key not in present:
                problems.append(Problem(language, "missing", key[0], f"from {origin}"))
        if check_source:
            # What the code no longer says is dead weight for translators.
            for key in sorted(present - set(expected), key=lambda k: (k[0], k[1] or "")):
                problems.append(Problem(language, "unused", key[0], "not in the source"))
    return problems


def _check_message(language: str, num_plurals: int, message: Any) -> list[Problem]:
    msgid = _key(message.id, None)[0]
    if message.fuzzy:
        return [Problem(language, "fuzzy", msgid)]
    if isinstance(message.id, str):
        if not message.string:
            return [Problem(language, "untranslated", msgid)]
        if not _same_placeholders(placeholders(message.id), placeholders(message.string)):
            return [_placeholder_problem(language, msgid, message.id, message.string)]
        return []
    # A plural entry: msgid, msgid_plural; msgstr[0..n-1].
    forms = tuple(message.string) if isinstance(message.string, list | tuple) else ()
    if not forms or any(not form for form in forms):
        return [Problem(language, "untranslated", msgid)]
    if len(forms) != num_plurals:
        return [
            Problem(language, "plural-forms", msgid, f"{len(forms)} forms, expected {num_plurals}")
        ]
    singular, plural = message.id[0], message.id[1]
    allowed = set(placeholders(singular)) | set(placeholders(plural))
    problems = [
        _placeholder_problem(language, msgid, plural, form)
        for form in forms
        if not set(placeholders(form)) <= allowed
    ]
    if not problems and not _same_placeholders(placeholders(plural), placeholders(forms[-1])):
        problems.append(_placeholder_problem(language, msgid, plural, forms[-1]))
    return problems


def _placeholder_problem(language: str, msgid: str, source: str, translation: str) -> Problem:
    wanted = sorted(placeholders(source))
    got = sorted(placeholders(translation))
    return Problem(language, "placeholders", msgid, f"msgid has {wanted}, msgstr has {got}")


# ---------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m telegram_bot.chat.i18n", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check", help="fail on untranslated, fuzzy or missing entries and placeholder mismatches"
    )
    check.add_argument("--locales-dir", type=Path, default=None)
    check.add_argument("--source-dir", type=Path, default=None)
    check.add_argument("--no-source", action="store_true", help="do not scan the source")
    check.add_argument("--languages", nargs="+", default=list(LANGUAGES))
    args = parser.parse_args(argv)

    if args.command == "check":
        problems = check_catalogs(
            args.locales_dir,
            args.languages,
            source_dir=args.source_dir,
            check_source=not args.no_source,
        )
        for problem in problems:
            print(problem)
        if problems:
            print(f"{len(problems)} problem(s) in the translation catalogs", file=sys.stderr)
            return 1
        print(f"catalogs complete: {', '.join(args.languages)}")
        return 0
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
