"""Strands' `strands.models` on Tether (see :mod:`tether.strands`)."""
