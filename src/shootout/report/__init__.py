"""Renderers that return text or bytes, never print: terminal table, JSON rows, charts,
HTML, Markdown and performance per price. Import the submodule you need (charts pulls in
matplotlib, which `shootout show` does not need)."""
