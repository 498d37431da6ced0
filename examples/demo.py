"""What ``make demo`` runs (after ``python -m kompute_ml info``): LogisticRegression trained on the
GPU (or whatever Vulkan device there is) on a bundled dataset, with device, accuracy and time."""

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    sys.argv = [os.path.join(HERE, "logistic_regression.py")] + sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
