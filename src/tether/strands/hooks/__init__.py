"""Strands' `strands.hooks` on Tether (see :mod:`tether.strands`)."""
