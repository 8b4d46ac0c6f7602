"""The Beacon API the simulated chain serves: routes, read-only queries, HTTP plumbing, errors."""
