"""The knowledge base: every known error as a page of a static, offline website (site.py)."""
