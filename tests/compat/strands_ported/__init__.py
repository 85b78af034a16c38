"""Strands' own tests for its public surface, ported to run against :mod:`tether.strands` (issue 29).

Ported from strands-agents/sdk-python ``tests/strands/...`` (and its ``tests/fixtures``): each
file names its source file and lists every upstream test it leaves out, with the reason (they
mock Strands internals, patch private attributes or need a real provider). The files import
``tether.strands`` only; ``_against_strands.py`` runs the very same files against the real
``strands`` package (imports rewritten) to show the port asserts Strands' behaviour.
"""
