"""Tests of the Python client against real `entitled` servers and scripted stand-ins (tests/support.py)."""
