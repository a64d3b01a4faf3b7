"""Label selectors (apimachinery: pkg/labels): the Selector model in `selector`, text to
Selector in `parser`.
"""

from __future__ import annotations

from kubeinformers.runtime.labels.parser import (
    parse as parse,
)
from kubeinformers.runtime.labels.parser import (
    to_selector as to_selector,
)
from kubeinformers.runtime.labels.selector import (
    Operator as Operator,
)
from kubeinformers.runtime.labels.selector import (
    Requirement as Requirement,
)
from kubeinformers.runtime.labels.selector import (
    Selector as Selector,
)
from kubeinformers.runtime.labels.selector import (
    everything as everything,
)
from kubeinformers.runtime.labels.selector import (
    nothing as nothing,
)
from kubeinformers.runtime.labels.selector import (
    validate_label_key as validate_label_key,
)
from kubeinformers.runtime.labels.selector import (
    validate_label_value as validate_label_value,
)

__all__ = [
    "Operator",
    "Requirement",
    "Selector",
    "everything",
    "nothing",
    "parse",
    "to_selector",
    "validate_label_key",
    "validate_label_value",
]
