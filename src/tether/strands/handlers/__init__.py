"""Strands' `strands.handlers` on Tether (see :mod:`tether.strands`)."""

from .callback_handler import CompositeCallbackHandler, PrintingCallbackHandler, null_callback_handler

__all__ = ["CompositeCallbackHandler", "PrintingCallbackHandler", "null_callback_handler"]
