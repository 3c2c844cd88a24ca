"""Starts the student's kernel: limits, a minimal environment, and (as root) another user.

Run by jupyter_client as the kernel command: `python launch.py CONFIG.json -- KERNEL_ARGV...`.
Standard library only: it runs with the grader's interpreter before anything else is imported.
"""

import json
import os
import resource
import shutil
import sys


def main() -> None:
    with open(sys.argv[1]) as f:
        config = json.load(f)
    argv = sys.argv[sys.argv.index("--") + 1 :]
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")  # under memory pressure the kernel dies first, never the grader
    except OSError:
        pass
    uid, gid = config.get("uid"), config.get("gid")
    if uid is not None:
        # The connection file is root's; the kernel gets its own copy in a folder it owns.
        original = argv[argv.index("-f") + 1]
        private = os.path.join(config["connection_dir"], "connection.json")
        shutil.copyfile(original, private)
        os.chown(private, uid, gid)
        os.chmod(private, 0o600)
        argv[argv.index("-f") + 1] = private
    for name, value in config["limits"].items():
        limit = getattr(resource, name)
        soft, hard = resource.getrlimit(limit)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))
    if uid is not None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    env = dict(config["env"])
    for key in ("JPY_PARENT_PID", "JPY_SESSION_NAME"):  # the kernel exits if the grader dies
        if key in os.environ:
            env[key] = os.environ[key]
    os.chdir(config["workdir"])
    os.execve(argv[0], argv, env)


if __name__ == "__main__":
    main()
