"""Label selectors (apimachinery: pkg/labels), public as `kubeinformers.labels`: the Selector
model in `selector`, text to Selector in `parser`. Names are imported on first use.
"""

from __future__ import annotations

from kubeinformers import _exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kubeinformers.runtime.labels.parser import parse as parse
    from kubeinformers.runtime.labels.parser import to_selector as to_selector
    from kubeinformers.runtime.labels.selector import Operator as Operator
    from kubeinformers.runtime.labels.selector import Requirement as Requirement
    from kubeinformers.runtime.labels.selector import Selector as Selector
    from kubeinformers.runtime.labels.selector import everything as everything
    from kubeinformers.runtime.labels.selector import nothing as nothing

_exports.install(__name__)
