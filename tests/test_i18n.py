"""Translations: catalogs complete, Persian digits and dates, LTR isolates, fallbacks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, date, datetime
from io import BytesIO
from pathlib import Path

import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from telegram_bot.chat import i18n
from telegram_bot.chat.i18n import (
    N_,
    Translator,
    check_catalogs,
    get_translator,
    language_from_telegram,
    load_translations,
    ltr,
    placeholders,
    to_ascii_digits,
    user_language,
)

REPO = Path(__file__).resolve().parents[1]
LOCALES = REPO / "locales"


@pytest.fixture(autouse=True)
def _fresh_cache():
    i18n.clear_cache()
    yield
    i18n.clear_cache()


def write_po(locales: Path, lang: str, body: str) -> Path:
    header = textwrap.dedent(
        f"""\
        msgid ""
        msgstr ""
        "Language: {lang}\\n"
        "Content-Type: text/plain; charset=utf-8\\n"
        "Plural-Forms: {"nplurals=1; plural=0;" if lang == "fa" else "nplurals=2; plural=(n != 1);"}\\n"

        """
    )
    path = locales / lang / "LC_MESSAGES" / "hokm.po"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + textwrap.dedent(body), encoding="utf-8")
    return path


# ------------------------------------------------------------------ the real catalogs


def test_catalogs_are_complete() -> None:
    """Every fa and en entry translated, none fuzzy, placeholders kept, and every
    message marked in telegram_bot/ present in both catalogs."""
    problems = check_catalogs(LOCALES)
    assert problems == [], "\n".join(str(p) for p in problems)


def test_catalogs_hold_exactly_what_the_source_says() -> None:
    """Extracted with Babel's own API (as babel.cfg's command does): every message the
    code marks is in the template and both catalogs, and nothing else is."""
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir

    keywords = {**DEFAULT_KEYWORDS, "tr": None, "N_": None, "ngettext": (1, 2)}
    source = {
        message if isinstance(message, str) else message[0]
        for _file, _line, message, _comments, _context in extract_from_dir(
            REPO / "telegram_bot", method_map=[("**.py", "python")], keywords=keywords
        )
    }
    assert "Hakem: {name}" in source and "{n} kot" in source  # the extractor works
    for path in (
        LOCALES / "hokm.pot",
        LOCALES / "fa" / "LC_MESSAGES" / "hokm.po",
        LOCALES / "en" / "LC_MESSAGES" / "hokm.po",
    ):
        with path.open("rb") as f:
            catalog = read_po(f)
        held = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id}
        assert not held - source, f"{path.name}: entries the code does not use: {held - source}"
        assert not source - held, f"{path.name}: messages missing: {source - held}"


def test_check_reports_unused_entries(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "m.py").write_text('def f(tr):\n    return tr("Used")\n', encoding="utf-8")
    for lang in ("fa", "en"):
        write_po(tmp_path, lang, 'msgid "Used"\nmsgstr "x"\n\nmsgid "Stale"\nmsgstr "y"\n')
    found = {(p.language, p.kind, p.msgid) for p in check_catalogs(tmp_path, source_dir=source)}
    assert found == {("fa", "unused", "Stale"), ("en", "unused", "Stale")}


def test_check_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "telegram_bot.chat.i18n", "check", "--locales-dir", str(LOCALES)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_persian_and_english_translations() -> None:
    fa = get_translator("fa", LOCALES)
    en = get_translator("en", LOCALES)
    assert fa("Your turn") == "نوبت شماست"
    assert en("Your turn") == "Your turn"
    assert fa("Hand {hand}: Team {n} won, {score}", hand=2, n=1, score="۷ به ۴") == (
        "دور ۲: تیم ۱ برد، ۷ به ۴"
    )
    assert en("Hand {hand}: Team {n} won, {score}", hand=2, n=1, score="7 to 4") == (
        "Hand 2: Team 1 won, 7 to 4"
    )
    # The English catalog words some messages better than their msgid.
    assert en("<b>Hokm</b> · hand {n}", n=3) == "<b>Hokm</b> · Hand 3"
    assert fa.ngettext("{n} point", "{n} points", 3) == "۳ امتیاز"
    assert en.ngettext("{n} point", "{n} points", 1) == "1 point"
    assert en.ngettext("{n} point", "{n} points", 2) == "2 points"
    assert en.ngettext("{n} trick", "{n} tricks", 1) == "1 trick"
    assert en.ngettext("{won} of {n} match won", "{won} of {n} matches won", 1, won=1) == (
        "1 of 1 match won"
    )
    assert fa.ngettext("{n} hand won", "{n} hands won", 3) == "۳ دور برده"
    # String arguments (names) are left alone, numbers are localized.
    assert fa("Hakem: {name}", name="Sara2") == "حاکم: Sara2"
    # Untranslated messages fall back to the English msgid.
    assert fa("Not in any catalog") == "Not in any catalog"
    assert N_("marker") == "marker"


# ------------------------------------------------------------------ the checker


def test_check_reports_untranslated_fuzzy_placeholders_and_missing(tmp_path: Path) -> None:
    locales = tmp_path / "locales"
    write_po(
        locales,
        "fa",
        """\
        msgid "Your turn"
        msgstr "نوبت شماست"

        msgid "Untranslated"
        msgstr ""

        #, fuzzy
        msgid "Fuzzy"
        msgstr "مبهم"

        msgid "Hakem: {name}"
        msgstr "حاکم: {nam}"

        msgid "Score: %(points)d"
        msgstr "امتیاز: %(point)d"

        msgid "{n} point"
        msgid_plural "{n} points"
        msgstr[0] "امتیاز"
        """,
    )
    write_po(
        locales,
        "en",
        """\
        msgid "Your turn"
        msgstr "Your turn"
        """,
    )
    (locales / "hokm.pot").write_text(
        'msgid ""\nmsgstr ""\n\nmsgid "Your turn"\nmsgstr ""\n\nmsgid "From template"\nmsgstr ""\n',
        encoding="utf-8",
    )
    source = tmp_path / "src"
    source.mkdir()
    (source / "handler.py").write_text(
        'def f(_):\n    return _("Only in source") + _.ngettext("{n} card", "{n} cards", 2)\n',
        encoding="utf-8",
    )

    problems = check_catalogs(locales, source_dir=source)
    found = {(p.language, p.kind, p.msgid) for p in problems}
    assert ("fa", "untranslated", "Untranslated") in found
    assert ("fa", "fuzzy", "Fuzzy") in found
    assert ("fa", "placeholders", "Hakem: {name}") in found
    assert ("fa", "placeholders", "Score: %(points)d") in found
    assert ("fa", "placeholders", "{n} point") in found
    assert ("fa", "missing", "From template") in found
    assert ("fa", "missing", "Only in source") in found
    assert ("fa", "missing", "{n} card") in found
    assert ("en", "missing", "From template") in found
    assert ("fa", "unused", "Untranslated") in found  # neither in the source nor the template
    assert not any(p.msgid == "Your turn" for p in problems)
    assert len(problems) == len(found)

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "telegram_bot.chat.i18n",
            "check",
            "--locales-dir",
            str(locales),
            "--no-source",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 1
    assert "untranslated: 'Untranslated'" in result.stdout
    assert "Only in source" not in result.stdout


def test_check_reports_a_missing_catalog(tmp_path: Path) -> None:
    write_po(tmp_path, "fa", 'msgid "a"\nmsgstr "ب"\n')
    problems = check_catalogs(tmp_path, check_source=False)
    assert [(p.language, p.kind) for p in problems] == [("en", "missing-catalog")]


def test_placeholders() -> None:
    assert placeholders("{name} has {n:>3} {{literal}}") == {"{name}": 1, "{n}": 1}
    assert placeholders("%(name)s got %d of %s, 50%% done") == {"%(name)": 1, "%d": 1, "%s": 1}
    assert placeholders("50% of the deck") == {}


# ------------------------------------------------------------------ loading


def test_mo_file_used_only_when_newer(tmp_path: Path) -> None:
    po = write_po(tmp_path, "fa", 'msgid "Leave"\nmsgstr "خروج"\n')
    with po.open("rb") as f:
        catalog = read_po(f, locale="fa")
    catalog["Leave"].string = "از mo"
    buffer = BytesIO()
    write_mo(buffer, catalog)
    mo = po.with_suffix(".mo")
    mo.write_bytes(buffer.getvalue())

    os.utime(po, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    os.utime(mo, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    assert get_translator("fa", tmp_path)("Leave") == "خروج"  # stale .mo ignored

    os.utime(mo, ns=(3_000_000_000_000_000_000, 3_000_000_000_000_000_000))
    load_translations(tmp_path, reload=True)
    assert get_translator("fa", tmp_path)("Leave") == "از mo"


def test_translations_are_cached(tmp_path: Path) -> None:
    write_po(tmp_path, "fa", 'msgid "Leave"\nmsgstr "خروج"\n')
    assert load_translations(tmp_path) is load_translations(tmp_path)
    assert get_translator("fa", tmp_path) is get_translator("fa", tmp_path)
    assert set(load_translations(tmp_path)) == {"fa"}


def test_locales_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_po(tmp_path, "fa", 'msgid "Leave"\nmsgstr "بیرون"\n')
    monkeypatch.setenv("HOKM_LOCALES_DIR", str(tmp_path))
    assert i18n.default_locales_dir() == tmp_path.resolve()
    assert get_translator("fa")("Leave") == "بیرون"
    monkeypatch.delenv("HOKM_LOCALES_DIR")
    assert i18n.default_locales_dir() == LOCALES


def test_unknown_language_falls_back_to_persian() -> None:
    assert get_translator("de", LOCALES).lang == "fa"
    assert get_translator(None, LOCALES).lang == "fa"
    assert get_translator("en-US", LOCALES).lang == "en"
    assert get_translator("xx", LOCALES)("Leave") == "خروج"
    # Without any catalog, messages come back untranslated.
    assert Translator("fa")("Leave") == "Leave"


def test_language_from_telegram() -> None:
    for code in ("fa", "fa-IR", "FA_ir", "prs", "ps", None, ""):
        assert language_from_telegram(code) == "fa", code
    for code in ("en", "en-US", "de", "ar", "tr", "ru"):
        assert language_from_telegram(code) == "en", code
    assert user_language("en", "fa") == "en"
    assert user_language(None, "fa-IR") == "fa"
    assert user_language(None, "de") == "en"


# ------------------------------------------------------------------ digits, dates, bidi


def test_persian_digits() -> None:
    fa, en = Translator("fa"), Translator("en")
    assert fa.format_number(0) == "۰"
    assert fa.format_number(7) == "۷"
    assert fa.format_number(1405) == "۱٬۴۰۵"
    assert fa.format_number(1405, grouping=False) == "۱۴۰۵"
    assert fa.format_number(2.5) == "۲٫۵"
    assert fa.format_number(-3) == "\u2066−۳\u2069"  # the sign stays on the left
    assert en.format_number(1234567) == "1,234,567"
    assert en.format_number(-3) == "-3"
    assert fa.digits("Team 1: 7 - 4") == "Team ۱: ۷ - ۴"
    assert en.digits("Team 1: 7 - 4") == "Team 1: 7 - 4"
    assert fa.digits(2026) == "۲۰۲۶"
    assert to_ascii_digits("۱۲۳ and ١٢٣") == "123 and 123"


def test_dates() -> None:
    fa, en = Translator("fa"), Translator("en")
    assert fa.date(date(2026, 11, 22)) == "۱ آذر ۱۴۰۵"
    assert en.date(date(2026, 11, 22)) == "22 Nov 2026"
    assert fa.date(date(2026, 3, 21)) == "۱ فروردین ۱۴۰۵"
    assert fa.date(date(2027, 3, 20)) == "۲۹ اسفند ۱۴۰۵"
    # Aware datetimes: Tehran time (UTC+03:30) for Persian, UTC for English.
    late = datetime(2026, 11, 21, 21, 0, tzinfo=UTC)  # 00:30 on 22 Nov in Tehran
    assert fa.date(late) == "۱ آذر ۱۴۰۵"
    assert en.date(late) == "21 Nov 2026"
    assert fa.date(datetime(2026, 11, 21, 21, 0)) == "۳۰ آبان ۱۴۰۵"  # naive: as is


def test_ltr_isolate() -> None:
    assert ltr("10♥") == "\u206610♥\u2069"
    assert i18n.isolate("Maryam") == "\u2068Maryam\u2069"  # first strong: names
    fa = get_translator("fa", LOCALES)
    text = fa("Trump: {suit}", suit=ltr("A♠"))
    assert text == "حکم: \u2066A♠\u2069"
    assert fa.is_rtl and not get_translator("en", LOCALES).is_rtl


def test_the_greeting_names_the_lobby_button_as_it_reads() -> None:
    from telegram_bot.chat import guide, render

    for language in ("fa", "en"):
        tr = get_translator(language, LOCALES)
        label = tr(render.GET_CARDS)
        assert f"«{label}»" in tr(guide.GREETING), language
        assert len(label) <= 40, label  # one line on a phone


def test_help_lists_every_command_of_the_menu() -> None:
    from telegram_bot.chat import guide

    for language in ("fa", "en"):
        text = guide.help_text(get_translator(language, LOCALES))
        # (/help is what shows this text)
        missing = [n for n, _ in guide.COMMANDS if n != "help" and f"/{n}" not in text]
        assert missing == [], (language, missing)
