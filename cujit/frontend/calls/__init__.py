"""Typing of calls, one module per kind of call."""
