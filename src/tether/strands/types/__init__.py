"""Strands' `strands.types` on Tether (see :mod:`tether.strands`)."""
