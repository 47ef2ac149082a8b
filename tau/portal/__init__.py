"""taugrid-portal: the experiment CLI, the Stellar dashboard and the local HTTP server."""
