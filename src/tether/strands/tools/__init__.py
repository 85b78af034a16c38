"""Strands' `strands.tools` on Tether (see :mod:`tether.strands`)."""
