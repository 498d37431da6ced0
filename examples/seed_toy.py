"""The classic two-feature toy problem, fitted on a Vulkan device.

Five points: the label is 1 exactly when the second feature is 1.

    python examples/seed_toy.py
"""

import numpy as np

import kompute_ml as km
from kompute_ml.linear_model import LogisticRegression

X = np.array([[0, 0], [1, 0], [1, 0], [1, 1], [1, 1]], dtype=np.float32)
y = np.array([0, 0, 0, 1, 1])


def main():
    print(f"device: {km.get_device().name}")
    for solver in ("adam", "lbfgs"):
        clf = LogisticRegression(solver=solver, C=100.0, max_iter=1000, random_state=0).fit(X, y)
        print(f"\nsolver={solver!r}: {clf.n_iter_[0]} iterations")
        print(f"  coef_ = {np.round(clf.coef_, 3).tolist()}  "
              f"intercept_ = {np.round(clf.intercept_, 3).tolist()}")
        print(f"  predict(X) = {clf.predict(X).tolist()}   (y = {y.tolist()})")
        print(f"  P(y=1)     = {np.round(clf.predict_proba(X)[:, 1], 3).tolist()}")


if __name__ == "__main__":
    main()
