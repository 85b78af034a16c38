"""Strands' `strands.experimental` on Tether (see :mod:`tether.strands`)."""
