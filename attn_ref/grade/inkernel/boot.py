"""The graded kernel's first code (sent with `python -c`), before ipykernel starts.

* attn_ref cannot be imported: defence in depth (the students' environment does not have it, and a
  kernel can remove this hook);
* `otter` is a stand-in while grading: `otter.Notebook` takes any arguments and its check, check_all,
  export and to_pdf do nothing (the hidden checks grade; importing the real otter costs about a second
  of CPU per submission).
"""

import sys
import types


class _NoGraderImports:
    def find_spec(self, name, path=None, target=None):
        if name == "attn_ref" or name.startswith("attn_ref."):
            raise ImportError("attn_ref is the grader's reference; submissions cannot import it")
        return None


class _GradingNotebook:
    """otter.Notebook while grading."""

    def __init__(self, *args, **kwargs):
        pass

    def check(self, *args, **kwargs):
        return None

    check_all = export = to_pdf = check

    @classmethod
    def init_grading_mode(cls, *args, **kwargs):
        pass


sys.meta_path.insert(0, _NoGraderImports())
_otter = types.ModuleType("otter")
_otter.Notebook = _GradingNotebook
_otter.__version__ = "grading stand-in"
sys.modules["otter"] = _otter
del _NoGraderImports, _GradingNotebook, _otter

from ipykernel import kernelapp  # noqa: E402

# IPython writes every cell into an SQLite history file as it runs it; nobody reads a graded kernel's history
kernelapp.launch_new_instance(argv=[*sys.argv[1:], "--HistoryManager.enabled=False"])
