"""The taugrid-portal command line."""
