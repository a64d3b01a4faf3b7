"""A shard ring over Leases (section N): `assignment` (rendezvous hashing over buckets, pure),
`members` (member Leases and their expiry), `core` (the handoff protocol's state and steps),
`ring` (threads) and `async_ring` (asyncio), thin faces over the core."""
