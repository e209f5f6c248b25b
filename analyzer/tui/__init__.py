"""`analyzer tui`: triage a crashed run interactively. Everything shown comes from the scan engine."""
