"""The canned queries: their SQL (shipped in the package), the rules for their parameters,
the SQL functions they call, and running them by name outside Datasette."""
