# Processes that outrun a one-pass cleanup: a chain that forks all the time, setsid'd and double-forked,
# plus a file left in shared memory and in /tmp for the next student to find.
import os
import time

with open("/dev/shm/__MARK__", "w") as f:
    f.write("left for the next student")
with open("/tmp/__MARK__", "w") as f:
    f.write("left for the next student")

if os.fork() == 0:
    os.setsid()
    while True:  # each generation forks the next and exits: there is never one process to kill
        try:
            if os.fork() != 0:
                os._exit(0)
        except OSError:
            time.sleep(0.01)
