"""The report's option values, apart from the modules that use them, so that the CLI can offer
them without importing pandas at start-up."""

BY = ("pattern", "fingerprint", "host", "day", "version")
ROWS = ("summary", "incidents", "runs", "bad")
ENGINES = ("local", "dask")
