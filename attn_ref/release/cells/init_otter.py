# Initialize Otter. If this environment has no otter-grader, the cell installs the pinned release first.
import sys

if "google.colab" in sys.modules:
    print("On Colab, grader.check and the export do not work (otter-grader OTTER_VERSION refuses them there): "
          "when you are done, use File > Download > Download .ipynb and submit that file to Gradescope.")
try:
    import otter
except ImportError:
    import subprocess

    print("otter-grader is not installed in this environment: installing otter-grader==OTTER_VERSION (once) ...")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "otter-grader==OTTER_VERSION"], check=True)
    import otter
grader = otter.Notebook("NOTEBOOK.ipynb")
