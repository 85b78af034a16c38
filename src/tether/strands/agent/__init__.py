"""Strands' `strands.agent` on Tether (see :mod:`tether.strands`)."""
