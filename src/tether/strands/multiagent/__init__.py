"""Strands' `strands.multiagent` on Tether (see :mod:`tether.strands`)."""
