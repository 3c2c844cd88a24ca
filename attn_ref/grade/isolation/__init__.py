"""Runs in the grader's process: starting and confining kernels (sandbox plan and jail, kernel client, the
kernel image, limits, cleanup, the watchdog). Imports the standard library, jupyter_client and zmq, and of
attn_ref.grade only inkernel/, student_python/, results, settings and owned: never scoring or the classroom."""
