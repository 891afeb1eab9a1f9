"""Between the engine and the sites: throttles, site scores, selection policies, retries, replication."""
