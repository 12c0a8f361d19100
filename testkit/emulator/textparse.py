"""Message text the way Telegram sees it: parse modes, entities and lengths.

Telegram parses ``parse_mode`` markup into plain text plus entities, trims
surrounding whitespace, and measures lengths and entity offsets in UTF-16 code units.
HTML is parsed like Telegram does (same supported tags, same error texts for the
common mistakes). Markdown and MarkdownV2 are only approximated: markup characters
are stripped and no entities are produced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from testkit.emulator.errors import ApiError, bad_request

__all__ = [
    "MAX_TEXT_LENGTH",
    "ParsedText",
    "command_entities",
    "parse_text",
    "utf16_len",
]

MAX_TEXT_LENGTH = 4096

Entity = dict[str, Any]

_TAG_ENTITY = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "a": "text_link",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
    "span": "spoiler",
}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_CHAR_REF = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]+);")
_ATTRIBUTE = re.compile(r"""\s*([a-zA-Z_-]+)\s*(?:=\s*("[^"]*"|'[^']*'|[^\s"']+))?""")
_COMMAND = re.compile(r"(?<!\S)/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![A-Za-z0-9_@])")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit of Telegram's lengths and offsets."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class ParsedText:
    """Plain text and its entities, as Telegram stores and returns a message text."""

    text: str
    entities: list[Entity] = field(default_factory=list)

    @property
    def length(self) -> int:
        """Length in UTF-16 code units."""
        return utf16_len(self.text)


def parse_text(
    source: str, parse_mode: str | None, entities: list[Entity] | None = None
) -> ParsedText:
    """Parse ``source`` like Telegram: markup to entities, then trim whitespace.

    Raises :class:`ApiError` for text Telegram refuses to parse.
    """
    mode = (parse_mode or "").lower()
    if mode == "html":
        parsed = _HtmlParser(source).parse()
    elif mode in ("markdown", "markdownv2"):
        parsed = ParsedText(_strip_markdown(source, v2=mode == "markdownv2"))
    elif mode:
        raise bad_request(f"unsupported parse_mode {parse_mode!r}")
    else:
        parsed = ParsedText(source, [dict(e) for e in entities or []])
    return _trim(parsed)


def command_entities(text: str) -> list[Entity]:
    """``bot_command`` entities for every ``/command`` (or ``/command@bot``) in ``text``."""
    return [
        {
            "type": "bot_command",
            "offset": utf16_len(text[: m.start()]),
            "length": utf16_len(m.group()),
        }
        for m in _COMMAND.finditer(text)
    ]


def _trim(parsed: ParsedText) -> ParsedText:
    """Strip surrounding whitespace, shifting and clipping entities to match."""
    text = parsed.text
    stripped = text.strip()
    if stripped == text:
        return parsed
    shift = utf16_len(text[: len(text) - len(text.lstrip())])
    end = utf16_len(stripped)
    entities: list[Entity] = []
    for entity in parsed.entities:
        start = max(entity["offset"] - shift, 0)
        stop = min(entity["offset"] + entity["length"] - shift, end)
        if stop > start:
            entities.append({**entity, "offset": start, "length": stop - start})
    return ParsedText(stripped, entities)


def _strip_markdown(source: str, *, v2: bool) -> str:
    """Approximate Markdown parsing: drop links' URLs, markup characters and escapes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", source)
    if v2:
        text = re.sub(r"(?<!\\)(\*|__|_|~|\|\||```|`)", "", text)
        return re.sub(r"\\(.)", r"\1", text)
    return re.sub(r"[*_`]", "", text)


class _HtmlParser:
    """Telegram's HTML subset: tags become entities, character references are decoded."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.out: list[str] = []
        self.length = 0  # UTF-16 length of the output so far
        self.open: list[tuple[str, Entity, int]] = []  # (tag, entity, byte offset)
        self.entities: list[Entity] = []

    def parse(self) -> ParsedText:
        src = self.source
        i = 0
        while i < len(src):
            char = src[i]
            if char == "<":
                i = self._tag(i)
            elif char == "&":
                i = self._char_ref(i)
            else:
                nxt = min((p for p in (src.find("<", i), src.find("&", i)) if p >= 0), default=-1)
                chunk = src[i:] if nxt < 0 else src[i:nxt]
                self._emit(chunk)
                i += len(chunk)
        if self.open:
            raise self._error(
                f'Can\'t find end tag corresponding to start tag "{self.open[-1][0]}"'
            )
        self.entities.sort(key=lambda e: (e["offset"], -e["length"]))
        return ParsedText("".join(self.out), self.entities)

    def _emit(self, text: str) -> None:
        self.out.append(text)
        self.length += utf16_len(text)

    def _byte_offset(self, index: int) -> int:
        return len(self.source[:index].encode("utf-8"))

    def _error(self, detail: str) -> ApiError:
        return bad_request(f"can't parse entities: {detail}")

    def _char_ref(self, i: int) -> int:
        match = _CHAR_REF.match(self.source, i)
        if match is None:
            self._emit("&")
            return i + 1
        name = match.group(1)
        if name.startswith(("#x", "#X")):
            self._emit(chr(int(name[2:], 16)))
        elif name.startswith("#"):
            self._emit(chr(int(name[1:])))
        elif name in _NAMED_ENTITIES:
            self._emit(_NAMED_ENTITIES[name])
        else:  # unknown named entities stay as they are
            self._emit(match.group())
        return match.end()

    def _tag(self, i: int) -> int:
        src = self.source
        close = src.find(">", i)
        at = self._byte_offset(i)
        if src.startswith("</", i):
            if close < 0:
                raise self._error(f"Unclosed end tag at byte offset {at}")
            self._end_tag(src[i + 2 : close].strip().lower(), at)
            return close + 1
        end = i + 1
        while end < len(src) and not src[end].isspace() and src[end] != ">":
            end += 1
        name = src[i + 1 : end].lower()
        if name not in _TAG_ENTITY:
            raise self._error(f'Unsupported start tag "{name}" at byte offset {at}')
        if close < 0:
            raise self._error(f"Unclosed start tag at byte offset {at}")
        attributes = {
            m.group(1).lower(): (m.group(2) or "").strip("\"'")
            for m in _ATTRIBUTE.finditer(src[end:close].rstrip("/"))
        }
        self._start_tag(name, attributes, at)
        return close + 1

    def _start_tag(self, name: str, attributes: dict[str, str], at: int) -> None:
        entity: Entity = {"type": _TAG_ENTITY[name], "offset": self.length}
        if name == "span" and attributes.get("class") != "tg-spoiler":
            raise self._error(f'Tag "span" must have class "tg-spoiler" at byte offset {at}')
        if name == "a":
            entity["url"] = attributes.get("href", "")
        elif name == "tg-emoji":
            entity["custom_emoji_id"] = attributes.get("emoji-id", "")
        elif name == "blockquote" and "expandable" in attributes:
            entity["type"] = "expandable_blockquote"
        elif name == "code" and self.open and self.open[-1][0] == "pre":
            language = attributes.get("class", "")
            if language.startswith("language-"):
                self.open[-1][1]["language"] = language.removeprefix("language-")
                entity["type"] = ""  # folded into the enclosing pre
        self.open.append((name, entity, at))

    def _end_tag(self, name: str, at: int) -> None:
        if not self.open:
            raise self._error(f"Unexpected end tag at byte offset {at}")
        expected, entity, _ = self.open.pop()
        if name != expected:
            raise self._error(
                f'Unmatched end tag at byte offset {at}, expected "</{expected}>", found "</{name}>"'
            )
        entity["length"] = self.length - entity["offset"]
        folded = not entity["type"]
        empty_link = entity["type"] == "text_link" and not entity["url"]
        if entity["length"] > 0 and not folded and not empty_link:
            self.entities.append(entity)
