"""What the facade's provider models share: Strands' ``config`` dict on a Tether provider.

A Strands provider keeps its settings in one dict (``model_id``, ``max_tokens``, ``params``,
...), changed with ``update_config(**kw)`` and read with ``get_config()``. The facade's
providers are Tether providers (retries, preflight, usage, lazy SDK imports all Tether's) that
keep that dict and push it onto the Tether provider's attributes on every change
(:meth:`StrandsProvider._apply`). A key Strands does not know is warned about as Strands does;
a key Strands knows but Tether cannot honour is refused by name
(:class:`~tether.errors.ConfigurationError`), never silently ignored.

They are also :class:`~tether.strands.models.model.Model` instances, so ``stream`` takes either
Tether's request (what the loop calls) or Strands' arguments (a program calling
``model.stream(messages, ...)`` itself gets the same Converse-shaped events).
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, ClassVar

from ...errors import ConfigurationError
from ...types import ModelRequest, StreamEvent
from .model import Model, T


class StrandsProvider(Model):
    """Strands' ``get_config``/``update_config`` over a Tether provider (a mixin: put it first)."""

    _keys: ClassVar[frozenset[str]]
    """Every key of the Strands provider's config TypedDict."""
    _unsupported: ClassVar[Mapping[str, str]] = {}
    """Keys Strands knows that Tether cannot honour, with what to do instead."""
    _label: ClassVar[str]

    config: dict[str, Any]

    def _accept(self, model_config: Mapping[str, Any]) -> None:
        """Warn about unknown keys (as Strands does) and refuse keys Tether cannot honour."""
        unknown = sorted(set(model_config) - self._keys)
        if unknown:
            warnings.warn(
                f"Invalid configuration parameters: {unknown}.\nValid parameters are: {sorted(self._keys)}.",
                stacklevel=4,
            )
        refused = [key for key in model_config if key in self._unsupported and model_config[key] not in (None, False)]
        if refused:
            reasons = "; ".join(f"{key}: {self._unsupported[key]}" for key in refused)
            raise ConfigurationError(f"{self._label} config {refused} is not supported by Tether's {self._label} ({reasons})")

    def update_config(self, **model_config: Any) -> None:
        """Update the configuration (Strands' ``update_config``) and apply it to the requests."""
        self._accept(model_config)
        self._check({**self.config, **model_config})
        self.config.update(model_config)
        self._apply()

    def _check(self, config: Mapping[str, Any]) -> None:
        """Raise :class:`~tether.errors.ConfigurationError` for a combination Tether cannot honour
        (called before the configuration changes, so a refused update changes nothing)."""

    def get_config(self) -> Any:
        """The configuration, as Strands' ``get_config`` returns it (a copy)."""
        return dict(self.config)

    def _apply(self) -> None:
        """Set the Tether provider's attributes from :attr:`config`."""
        raise NotImplementedError

    def stream(
        self,
        messages: Any,
        tool_specs: list[Any] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: Any | None = None,
        system_prompt_content: list[Any] | None = None,
        invocation_state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Tether's ``stream(request)``, or Strands' ``stream(messages, tool_specs, system_prompt, ...)``."""
        if isinstance(messages, dict):
            request: ModelRequest = messages  # type: ignore[assignment]
        else:
            blocks: Any = (
                system_prompt_content if system_prompt_content is not None else ([{"text": system_prompt}] if system_prompt else None)
            )
            state = kwargs.get("model_state")
            request = {
                "messages": list(messages),
                "system_prompt": blocks,
                "tool_specs": list(tool_specs or []),
                "tool_choice": tool_choice,
                "model_state": state if isinstance(state, dict) else {},
            }
        # The Tether provider's stream: the MRO goes on past Model to the provider class.
        tether_stream: Any = super(Model, self).stream  # type: ignore[misc]
        return tether_stream(request)  # type: ignore[no-any-return]

    async def structured_output(
        self, output_model: type[T], prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Not offered on the model: use ``agent.structured_output(...)`` (it runs through the agent's loop)."""
        raise ConfigurationError(
            f"{self._label}.structured_output() is not supported on Tether; call agent.structured_output({output_model.__name__}, ...)"
        )
        yield {}  # pragma: no cover (makes this an async generator, as Strands' is)
