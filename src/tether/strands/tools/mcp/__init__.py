"""Strands' `strands.tools.mcp` on Tether (see :mod:`tether.strands`)."""
