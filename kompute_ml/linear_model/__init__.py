"""Linear models trained on a Vulkan device (scikit-learn estimators)."""

from ._logistic import LogisticRegression

__all__ = ["LogisticRegression"]
