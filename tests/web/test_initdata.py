"""initData: Telegram's signature and age checks, and a fuzz of forged, malformed and
stale ones."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import parse_qsl, quote, urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from telegram_bot.web.initdata import (
    DEFAULT_MAX_AGE,
    MAX_SKEW,
    InitDataError,
    validate,
)
from testkit.webapp import init_data

TOKEN = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"
NOW = 1_750_000_000


def _code(data: str, token: str = TOKEN, now: float = NOW, **kw) -> str:
    with pytest.raises(InitDataError) as err:
        validate(data, token, now=now, **kw)
    return err.value.code


def test_documented_scheme_written_out_independently() -> None:
    """A hash computed here from Telegram's description, without the module's helpers."""
    user = json.dumps({"id": 42, "first_name": "Ali", "language_code": "fa"})
    fields = {"auth_date": str(NOW), "query_id": "AAHx", "user": user, "start_param": "g1"}
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(b"WebAppData", TOKEN.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    got = validate(urlencode(fields, quote_via=quote), TOKEN, now=NOW + 5)
    assert (got.id, got.first_name, got.language_code, got.start_param) == (42, "Ali", "fa", "g1")
    assert got.auth_date == NOW
    # The key the other way round (HMAC(key=token, msg="WebAppData")) is not Telegram's.
    wrong = hmac.new(TOKEN.encode(), b"WebAppData", hashlib.sha256).digest()
    fields["hash"] = hmac.new(wrong, check.encode(), hashlib.sha256).hexdigest()
    assert _code(urlencode(fields, quote_via=quote)) == "bad_hash"


def test_signed_by_the_testkit_is_accepted() -> None:
    data = init_data(TOKEN, 7, "Sara «ج»", language_code="en", auth_date=NOW, username="sara")
    u = validate(data, TOKEN, now=NOW)
    assert (u.id, u.first_name, u.username, u.language_code) == (7, "Sara «ج»", "sara", "en")


def test_other_bots_token_is_refused() -> None:
    assert _code(init_data(TOKEN, 7, auth_date=NOW), token="999:other") == "bad_hash"


@pytest.mark.parametrize(
    ("age", "code"),
    [(DEFAULT_MAX_AGE + 1, "stale"), (-(MAX_SKEW + 1), "future")],
)
def test_age_limits(age: int, code: str) -> None:
    assert _code(init_data(TOKEN, 7, auth_date=NOW - age)) == code


def test_age_limits_are_inclusive_of_the_edges() -> None:
    assert validate(init_data(TOKEN, 7, auth_date=NOW - DEFAULT_MAX_AGE), TOKEN, now=NOW).id == 7
    assert validate(init_data(TOKEN, 7, auth_date=NOW + MAX_SKEW), TOKEN, now=NOW).id == 7
    assert _code(init_data(TOKEN, 7, auth_date=NOW - 100), max_age=99) == "stale"


def _resigned(fields: dict[str, str]) -> str:
    from telegram_bot.web.initdata import sign

    fields = dict(fields)
    fields["hash"] = sign(fields, TOKEN)
    return urlencode(fields, quote_via=quote)


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"auth_date": str(NOW)}, "no_user"),
        ({"auth_date": str(NOW), "user": "{not json"}, "bad_user"),
        ({"auth_date": str(NOW), "user": "[1]"}, "bad_user"),
        ({"auth_date": str(NOW), "user": '{"id": "7"}'}, "bad_user"),
        ({"auth_date": str(NOW), "user": '{"id": true}'}, "bad_user"),
        ({"auth_date": str(NOW), "user": '{"id": -3}'}, "bad_user"),
        ({"user": '{"id": 7}'}, "no_auth_date"),
        ({"auth_date": "1e9", "user": '{"id": 7}'}, "no_auth_date"),
        ({"auth_date": "٢٠٠", "user": '{"id": 7}'}, "no_auth_date"),
    ],
)
def test_signed_but_unusable(fields: dict[str, str], code: str) -> None:
    """Genuinely signed fields that still do not name a user at a time: refused."""
    assert _code(_resigned(fields)) == code


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("", "missing"),
        ("a" * 5000, "too_long"),
        ("user=1&user=2&hash=" + "0" * 64, "malformed"),
        ("no-equals-sign", "malformed"),
        ("auth_date=1&user=%7B%7D", "no_hash"),
        ("auth_date=1&user=%7B%7D&hash=XYZ", "bad_hash"),
        ("Bad Key=1&hash=" + "0" * 64, "malformed"),
        ("user=%FF&hash=" + "0" * 64, "malformed"),
    ],
)
def test_malformed(data: str, code: str) -> None:
    assert _code(data) == code


def test_repeated_field_cannot_smuggle_a_second_user() -> None:
    good = init_data(TOKEN, 7, auth_date=NOW)
    evil = good + "&user=" + quote(json.dumps({"id": 8}))
    assert _code(evil) == "malformed"


# ----------------------------------------------------------------------------- fuzz

_GOOD = init_data(TOKEN, 7, "Ali", auth_date=NOW)
_GOOD_FIELDS = dict(parse_qsl(_GOOD))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_arbitrary_text_is_refused_cleanly(data: str) -> None:
    with pytest.raises(InitDataError):
        validate(data, TOKEN, now=NOW)


@settings(max_examples=300, deadline=None)
@given(pos=st.integers(0, len(_GOOD) - 1), ch=st.characters(codec="ascii"))
def test_fuzz_one_character_changed(pos: int, ch: str) -> None:
    """Changing one character either changes nothing that was signed, or is refused."""
    data = _GOOD[:pos] + ch + _GOOD[pos + 1 :]
    try:
        u = validate(data, TOKEN, now=NOW)
    except InitDataError:
        return
    assert u.fields == _GOOD_FIELDS  # e.g. "%2C" for "," : the same decoded fields
    assert u.id == 7


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(sorted(_GOOD_FIELDS)),
    value=st.text(max_size=60),
)
def test_fuzz_forged_field_value(key: str, value: str) -> None:
    """Any field replaced without the token's key: refused, unless it is unchanged."""
    fields = dict(_GOOD_FIELDS, **{key: value})
    data = urlencode(fields, quote_via=quote)
    if fields == _GOOD_FIELDS:
        assert validate(data, TOKEN, now=NOW).id == 7
    else:
        assert _code(data) in {"bad_hash", "malformed"}


@settings(max_examples=200, deadline=None)
@given(uid=st.integers(1, 2**52), age=st.integers(DEFAULT_MAX_AGE + 1, 10**9))
def test_fuzz_stale_is_refused_whoever_signs(uid: int, age: int) -> None:
    assert _code(init_data(TOKEN, uid, auth_date=NOW - age)) == "stale"


@settings(max_examples=200, deadline=None)
@given(uid=st.integers(1, 2**52), age=st.integers(-MAX_SKEW, DEFAULT_MAX_AGE), name=st.text())
def test_fuzz_fresh_genuine_is_accepted(uid: int, age: int, name: str) -> None:
    u = validate(init_data(TOKEN, uid, name, auth_date=NOW - age), TOKEN, now=NOW)
    assert (u.id, u.first_name) == (uid, name)
