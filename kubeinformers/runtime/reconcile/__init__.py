"""The reconcile loop over informers and a rate-limited work queue: `loop` (threads) and
`async_loop` (asyncio), two thin faces over `core` (inputs, sync waiting, retry policy)."""
