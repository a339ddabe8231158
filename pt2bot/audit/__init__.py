"""The nightly audit: run the whole zoo on one commit, keep history, chart trends, keep the tracking issue current."""
