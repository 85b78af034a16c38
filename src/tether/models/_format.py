"""Helpers shared by the provider modules: lazy SDK imports, message merging, bytes and text.

Providers differ in wire format but agree on a few chores: import an optional SDK with an error
that says which extra to install, merge consecutive same-role messages (the loop can produce two
user messages in a row, most APIs refuse that), turn in-memory bytes (or their base64 envelope)
into bytes, and render a tool result's content as text for APIs that take only text.
"""

from __future__ import annotations

import base64
import importlib
import json
from typing import Any
from urllib.parse import urlsplit

from .._json import decode_bytes
from ..errors import ConfigurationError, ModelError
from ..types import Message, ToolResultContent

IMAGE_MEDIA_TYPES: dict[str, str] = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "jpg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
}
"""Converse image formats → MIME types."""

TEXT_DOCUMENT_FORMATS: frozenset[str] = frozenset({"txt", "md", "csv", "html", "json", "xml"})
"""Document formats whose bytes are UTF-8 text (sent as text where an API has no file part)."""


def import_sdk(module: str, extra: str) -> Any:
    """Import an optional provider SDK, or raise a :class:`ConfigurationError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigurationError(
            f"the {module!r} package is required for this model but is not installed; install it with pip install 'tether[{extra}]'"
        ) from exc


def check_url(url: str, field: str) -> None:
    """Refuse (:class:`ConfigurationError` naming ``field``) a URL that is not ``http(s)://HOST[:PORT][/PATH]``."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises ValueError)
    except ValueError as exc:
        raise ConfigurationError(f"{field} {url!r} is not a well-formed URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"{field} {url!r} is not an http(s) URL with a host, e.g. http://127.0.0.1:8080/v1")


def merge_same_role(messages: list[Message]) -> list[Message]:
    """Consecutive messages of one role become one message (a copy; the input is untouched)."""
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"].extend(message["content"])
        else:
            merged.append({"role": message["role"], "content": list(message["content"])})
    return merged


def to_bytes(value: Any, where: str) -> bytes:
    """Bytes from in-memory bytes or a ``{"$b64": ...}`` envelope; a clear error otherwise."""
    raw = decode_bytes(value)
    if raw is None:
        raise ModelError(f"{where} must be bytes or a base64 envelope, got {type(value).__name__}")
    return bytes(raw)


def b64(value: Any, where: str) -> str:
    """Base64 text of a bytes value (see :func:`to_bytes`)."""
    return base64.b64encode(to_bytes(value, where)).decode("ascii")


def image_media_type(fmt: str, where: str) -> str:
    """The MIME type of a Converse image format, or a clear error naming the field."""
    try:
        return IMAGE_MEDIA_TYPES[fmt.lower()]
    except KeyError:
        raise ModelError(f"{where}.format {fmt!r} is not supported; use one of {sorted(IMAGE_MEDIA_TYPES)}") from None


def tool_result_text(content: list[ToolResultContent]) -> str:
    """A tool result's text and JSON parts as one string (images and documents are noted)."""
    parts: list[str] = []
    for item in content:
        if "text" in item:
            parts.append(item["text"])
        elif "json" in item:
            parts.append(json.dumps(item["json"], ensure_ascii=False))
        elif "image" in item:
            parts.append(f"[image: {item['image'].get('format', '?')}]")
        elif "document" in item:
            parts.append(f"[document: {item['document'].get('name', '?')}]")
    return "\n".join(parts)
