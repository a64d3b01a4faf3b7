"""Work queues (client-go: util/workqueue): the queues in `queue`, the rate limiters in
`rate_limiters`, the metrics hooks in `metrics`; the clocks come from `runtime.clock`.
"""
