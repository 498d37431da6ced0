"""Train LogisticRegression on a bundled dataset on the default Vulkan device.

Prints the device, the test accuracy and the fit time, next to scikit-learn's LogisticRegression
on the same split (``make demo`` runs this through examples/demo.py).

    python examples/logistic_regression.py [--dataset digits|breast_cancer|iris|wine]
                                           [--solver auto|adam|sgd|lbfgs] [--device SPEC]
"""

import argparse
import time

from sklearn import datasets
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import kompute_ml as km
from kompute_ml.linear_model import LogisticRegression


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="digits",
                        choices=["digits", "breast_cancer", "iris", "wine"])
    parser.add_argument("--solver", default="auto", choices=["auto", "adam", "sgd", "lbfgs"])
    parser.add_argument("--device", default=None, help="device index or name (default: best)")
    args = parser.parse_args(argv)

    X, y = getattr(datasets, "load_" + args.dataset)(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
    dev = km.get_device(args.device)
    print(f"device:  [{dev.index}] {dev.name} ({dev.info.type}, {dev.info.driver})")
    print(f"dataset: {args.dataset}, {X_train.shape[0]} training rows x {X.shape[1]} features, "
          f"{len(set(y))} classes")

    clf = make_pipeline(StandardScaler(), LogisticRegression(solver=args.solver, random_state=0,
                                                             device=dev))
    clf.fit(X_train[:20], y_train[:20])            # first use of the device: pipelines, shaders
    t0 = time.perf_counter()
    clf.fit(X_train, y_train)
    seconds = time.perf_counter() - t0
    model = clf[-1]
    print(f"kompute_ml LogisticRegression(solver={args.solver!r}): test accuracy "
          f"{clf.score(X_test, y_test):.4f}, fit {seconds:.3f} s ({model.n_iter_[0]} "
          f"{'iterations' if args.solver in ('lbfgs', 'auto') else 'epochs'})")

    sk = make_pipeline(StandardScaler(), SkLogisticRegression(max_iter=1000))
    t0 = time.perf_counter()
    sk.fit(X_train, y_train)
    seconds = time.perf_counter() - t0
    print(f"scikit-learn LogisticRegression(lbfgs) on the CPU: test accuracy "
          f"{sk.score(X_test, y_test):.4f}, fit {seconds:.3f} s")


if __name__ == "__main__":
    main()
