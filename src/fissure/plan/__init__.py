"""Planning before ingesting: survey a corpus, recommend settings, estimate the cost.

``fissure recommend`` and ``fissure estimate`` are thin commands over these functions;
``fissure tune`` over :func:`fissure.plan.tune.tune` (not imported here: it brings the
evaluator).
"""

from fissure.plan.estimate import Estimate, estimate
from fissure.plan.recommend import Recommendation, recommend
from fissure.plan.survey import Survey, survey

__all__ = ["Estimate", "Recommendation", "Survey", "estimate", "recommend", "survey"]
