"""Strands' `strands.agent.conversation_manager` on Tether (see :mod:`tether.strands`)."""
