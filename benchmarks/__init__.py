"""Benchmarks of the bot as a whole (see benchmarks/loadtest.py)."""
