import pathlib
import sys

# Make ``tests`` importable as a package (for tests.gradcases) wherever pytest runs.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
