"""Lease-based leader election: `elector` (threads; the algorithm, the Lease lock) and
`async_elector` (asyncio), a thin face that reuses `elector.LeaderElector` for every attempt."""
