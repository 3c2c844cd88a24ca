"""Runs on the STUDENTS' interpreter, as a trusted helper of the grader: the kernel's launcher and its bounds,
the kernel image's server, the mistakes' runner. Started by path with ``python -I`` (the students' environment
has no attn_ref), so each file imports only the standard library, numpy, torch, ipykernel and, by path, its neighbours."""

from pathlib import Path

HERE = Path(__file__).parent
LAUNCHER = HERE / "launch.py"  # starts one kernel under launch_bounds' bounds (sandbox.py runs it)
BOUNDS = HERE / "launch_bounds.py"  # the bounds, and as a script the network ban's probe
IMAGE_SERVER = HERE / "image_server.py"  # the kernel image: torch imported once, kernels forked from it
MISTAKES_RUNNER = HERE / "mistakes_runner.py"  # the assignment's mutants on the grader's inputs
SWEEP_RUNNER = HERE / "sweep_runner.py"  # the seed sweep's calls of the instructor's implementations
