"""Strands' `strands.experimental.checkpoint` on Tether (see :mod:`tether.strands`)."""
