"""Strands' `strands.handlers` on Tether (see :mod:`tether.strands`)."""
