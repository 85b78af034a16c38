"""The input-token estimate: about four characters of compact JSON per token."""

from __future__ import annotations

from tether.budget import CHARS_PER_TOKEN, estimate_tokens


def test_the_estimate_is_the_json_length_over_four_rounded_up() -> None:
    message = {"role": "user", "content": [{"text": "x" * 100}]}
    text = '{"role":"user","content":[{"text":"' + "x" * 100 + '"}]}'
    assert estimate_tokens(message) == -(-len(text) // CHARS_PER_TOKEN)
    assert estimate_tokens(None) == 0


def test_bytes_count_as_their_base64_text() -> None:
    assert estimate_tokens(b"\x00" * 300) == (400 + 2) // 4 + 1  # 400 base64 chars and two quotes
