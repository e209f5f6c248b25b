"""analyzer: find the failure that matters in LLM-server logs."""

__version__ = "0.1.0"
