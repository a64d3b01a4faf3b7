"""Work queues (client-go: util/workqueue): the queues in `queue`, the rate limiters in
`rate_limiters`, the metrics hooks in `metrics`; the clocks come from `runtime.clock`.
"""

from __future__ import annotations

from kubeinformers.runtime.clock import (
    Clock as Clock,
)
from kubeinformers.runtime.clock import (
    FakeClock as FakeClock,
)
from kubeinformers.runtime.clock import (
    RealClock as RealClock,
)
from kubeinformers.runtime.workqueue.async_queue import (
    AsyncRateLimitingQueue as AsyncRateLimitingQueue,
)
from kubeinformers.runtime.workqueue.async_queue import (
    QueueShutDown as QueueShutDown,
)
from kubeinformers.runtime.workqueue.metrics import (
    CounterMetric as CounterMetric,
)
from kubeinformers.runtime.workqueue.metrics import (
    GaugeMetric as GaugeMetric,
)
from kubeinformers.runtime.workqueue.metrics import (
    HistogramMetric as HistogramMetric,
)
from kubeinformers.runtime.workqueue.metrics import (
    MetricsProvider as MetricsProvider,
)
from kubeinformers.runtime.workqueue.metrics import (
    NoopMetricsProvider as NoopMetricsProvider,
)
from kubeinformers.runtime.workqueue.metrics import (
    SettableGaugeMetric as SettableGaugeMetric,
)
from kubeinformers.runtime.workqueue.queue import (
    DelayingQueue as DelayingQueue,
)
from kubeinformers.runtime.workqueue.queue import (
    QueueBackend as QueueBackend,
)
from kubeinformers.runtime.workqueue.queue import (
    RateLimitingQueue as RateLimitingQueue,
)
from kubeinformers.runtime.workqueue.queue import (
    WorkQueue as WorkQueue,
)
from kubeinformers.runtime.workqueue.queue import (
    set_provider as set_provider,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    BucketRateLimiter as BucketRateLimiter,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    ItemExponentialFailureRateLimiter as ItemExponentialFailureRateLimiter,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    ItemFastSlowRateLimiter as ItemFastSlowRateLimiter,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    MaxOfRateLimiter as MaxOfRateLimiter,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    RateLimiter as RateLimiter,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    WithMaxWaitRateLimiter as WithMaxWaitRateLimiter,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    default_controller_rate_limiter as default_controller_rate_limiter,
)
from kubeinformers.runtime.workqueue.rate_limiters import (
    default_item_based_rate_limiter as default_item_based_rate_limiter,
)

__all__ = [
    "AsyncRateLimitingQueue",
    "QueueShutDown",
    "BucketRateLimiter",
    "Clock",
    "CounterMetric",
    "DelayingQueue",
    "FakeClock",
    "GaugeMetric",
    "HistogramMetric",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "QueueBackend",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "SettableGaugeMetric",
    "WithMaxWaitRateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "set_provider",
]
