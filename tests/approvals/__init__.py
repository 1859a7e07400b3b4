"""Approvals: COMMIT as a request that a person decides."""
