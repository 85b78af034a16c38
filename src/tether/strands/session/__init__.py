"""Strands' `strands.session` on Tether (see :mod:`tether.strands`)."""
