"""Thin Typer commands: options -> typed request -> library call -> rendered result."""
