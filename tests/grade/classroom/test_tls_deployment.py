"""A real deployment, as the cluster guide shows it: a department CA and the scheduler's, the workers' and the
TA's certificates in files; `dask scheduler` and two `dask worker` commands started from their command lines
with those files and require-encryption on; the TA's `attn-ref grade --cluster tls://…` taking its certificate
from Dask's configuration. The same grades as --jobs; a client whose certificate another CA signed is refused
before anything is graded; a worker killed mid-run loses no submission and doubles none."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from cluster_certificates import Authority, write_authority
from hostile import kernel_uid_processes

BIN = Path(sys.executable).parent
ENCRYPTED = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}  # on every process: no plain tcp:// anywhere
LIMITS = ["--cell-timeout", "120", "--call-timeout", "30", "--timeout", "400"]  # generous: 8 helpers share 2 cores here
GRADER_MARK = "--require-isolation"  # in the command line of the grader a worker starts for one submission


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scheduler_command(port: int, tls: Authority) -> list[str]:
    pair = tls.pairs["scheduler"]
    return [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--protocol", "tls",
            "--dashboard-address", f"127.0.0.1:{free_port()}",
            "--tls-ca-file", str(tls.ca_file), "--tls-cert", str(pair.cert), "--tls-key", str(pair.key)]


def worker_command(address: str, name: str, tls: Authority) -> list[str]:
    pair = tls.pairs["worker"]
    return [str(BIN / "dask"), "worker", address, "--name", name, "--nthreads", "1",
            "--tls-ca-file", str(tls.ca_file), "--tls-cert", str(pair.cert), "--tls-key", str(pair.key)]


def client_config(folder: Path, ca_file: Path, cert: Path, key: Path) -> dict:
    """The TA's side, as the guide shows it: a YAML file in a folder of Dask's configuration; the environment
    that points `attn-ref grade` at it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "grading.yaml").write_text(f"""distributed:
  comm:
    require-encryption: true
    tls:
      ca-file: {ca_file}
      client: {{cert: {cert}, key: {key}}}
""")
    return {"DASK_CONFIG": str(folder)}


class Started:
    """Commands started in sessions of their own, each logging to a file; ``stop`` ends each one's process
    group and every process it had started, and waits until none is left."""

    def __init__(self, logs: Path):
        self.logs, self.processes = logs, {}

    def start(self, name: str, command: list[str], env: dict) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process, in stop
        process = subprocess.Popen(command, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        self.processes[name] = (process, log)
        return process

    def tree(self, name: str) -> list[psutil.Process]:
        process = self.processes[name][0]
        try:
            root = psutil.Process(process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def kill(self, name: str) -> list[psutil.Process]:
        """SIGKILL to the command's process group (a machine lost): the processes it had, to wait for."""
        tree = self.tree(name)
        try:
            os.killpg(self.processes[name][0].pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return tree

    def stop(self) -> None:
        trees = {name: self.tree(name) for name in self.processes}
        for name, (process, _) in self.processes.items():
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        everything = [p for tree in trees.values() for p in tree]
        _, alive = psutil.wait_procs(everything, timeout=20)
        for p in alive:  # what ignored SIGTERM, or left the group (setsid), ends now
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=10)
        for process, log in self.processes.values():
            process.wait(timeout=10)
            log.close()

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]


@dataclass
class Deployment:
    address: str
    tls: Authority
    started: Started
    ta_env: dict  # the TA's Dask configuration: the department's CA and the TA's certificate


def _wait_for_workers(deployment: Deployment, count: int, timeout: float = 240) -> None:
    from distributed import Client
    from distributed.security import Security

    pair = deployment.tls.pairs["client"]
    security = Security(tls_ca_file=str(deployment.tls.ca_file), tls_client_cert=str(pair.cert),
                        tls_client_key=str(pair.key), require_encryption=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with Client(deployment.address, security=security, timeout=20) as client:
                client.wait_for_workers(count, timeout=max(1.0, deadline - time.monotonic()))
                return
        except (OSError, TimeoutError) as err:
            if time.monotonic() > deadline:
                logs = "\n".join(f"--- {n}\n{deployment.started.log(n)}" for n in deployment.started.processes)
                raise AssertionError(f"the cluster did not come up ({err}):\n{logs}") from None
            time.sleep(1)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deployment")
    tls = write_authority(folder / "department", "department")
    started = Started(folder)
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    pair = tls.pairs["client"]
    ta_env = client_config(folder / "ta-dask", tls.ca_file, pair.cert, pair.key)
    try:
        started.start("scheduler", scheduler_command(port, tls), ENCRYPTED)
        for name in ("worker-a", "worker-b"):
            started.start(name, worker_command(address, name, tls), ENCRYPTED)
        deployment = Deployment(address, tls, started, ta_env)
        _wait_for_workers(deployment, 2)
        yield deployment
    finally:
        started.stop()
        left = [p.pid for p in psutil.process_iter(["cmdline"]) if str(folder) in " ".join(p.info["cmdline"] or [])]
        assert not left, f"left running after the deployment stopped: {left}"


@pytest.fixture(scope="module")
def practice_class(release, tmp_path_factory):
    """Six practice submissions, each signed in (so each student has numbers of their own): right, blank, and a
    file that is no notebook."""
    import nbformat
    from conftest import signed_in

    out, _ = release
    folder = tmp_path_factory.mktemp("tls_class")
    for kind, source, count in (("right", "solutions", 3), ("blank", "assignments", 2)):
        notebook = nbformat.read(str(out / source / "practice/practice.ipynb"), as_version=4)
        for i in range(count):
            nbformat.write(signed_in(notebook, f"{kind}{i}@uni.edu"), str(folder / f"{kind}_{i}.ipynb"))
    (folder / "corrupt.ipynb").write_text("{ not json")
    return folder, out / "autograder/practice-autograder.zip"


def attn_ref_grade(folder: Path, zip_path: Path, out: Path, *where: str, env: dict | None = None, wait: bool = True):
    command = [str(BIN / "attn-ref"), "grade", str(folder), "--autograder", str(zip_path), "--out", str(out), *where, *LIMITS]
    process = subprocess.Popen(command, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    if not wait:
        return process
    stdout, stderr = process.communicate(timeout=900)
    return process.returncode, stdout, stderr


def gradebook(out: Path) -> list[dict[str, str]]:
    """grades.csv's rows, every column, in name order."""
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        return sorted(csv.DictReader(f), key=lambda row: row["name"])


def question_scores(out: Path) -> dict[str, list]:
    found = {}
    for path in sorted((out / "results").glob("*.json")):
        results = json.loads(path.read_text())
        found[path.stem] = [(t["name"], t["score"]) for t in results["tests"]]
    return found


def kernel_uids(out: Path) -> set:
    return {json.loads(p.read_text())["extra_data"].get("kernel", {}).get("uid") for p in (out / "results").glob("*.json")}


@pytest.fixture(scope="module")
def graded_with_jobs(practice_class, tmp_path_factory):
    folder, zip_path = practice_class
    out = tmp_path_factory.mktemp("tls_jobs") / "graded"
    code, stdout, stderr = attn_ref_grade(folder, zip_path, out, "--jobs", "2")
    assert code == 0, stderr
    return out


@pytest.mark.slow
def test_the_deployment_grades_as_jobs_does(deployment, practice_class, graded_with_jobs, tmp_path):
    folder, zip_path = practice_class
    out = tmp_path / "graded"
    code, stdout, stderr = attn_ref_grade(folder, zip_path, out, "--cluster", deployment.address, env=deployment.ta_env)
    assert code == 0, stderr
    rows = gradebook(out)
    assert rows == gradebook(graded_with_jobs)
    assert [(r["total"], r["status"]) for r in rows if r["name"].startswith("right")] == [("23", "ok")] * 3
    assert question_scores(out) == question_scores(graded_with_jobs)
    if os.geteuid() == 0:  # as root, each worker's kernels ran as other uids, and none is left
        uids = kernel_uids(out) - {None}
        assert uids and 0 not in uids
        assert not kernel_uid_processes(uids)


@pytest.mark.slow
def test_a_client_whose_certificate_another_ca_signed_is_refused(deployment, practice_class, tmp_path):
    """Whoever has the department's CA certificate (it is public) but a certificate of their own making."""
    folder, zip_path = practice_class
    rogue = write_authority(tmp_path / "rogue", "rogue")
    pair = rogue.pairs["client"]
    env = client_config(tmp_path / "rogue-dask", deployment.tls.ca_file, pair.cert, pair.key)
    out = tmp_path / "graded"
    code, stdout, stderr = attn_ref_grade(folder, zip_path, out, "--cluster", deployment.address, env=env)
    assert code == 2
    assert "refused" in stderr and "does not accept this client's certificate" in stderr and str(pair.cert) in stderr
    assert "Traceback" not in stderr
    assert not (out / "grades.csv").exists() and not list(out.rglob("*.json")) and not list(out.rglob("*.csv"))
    # and one that trusts its own CA only does not trust the scheduler either
    env = client_config(tmp_path / "rogue-ca-dask", rogue.ca_file, pair.cert, pair.key)
    code, _, stderr = attn_ref_grade(folder, zip_path, out, "--cluster", deployment.address, env=env)
    assert code == 2 and "the scheduler's certificate is not signed by the CA" in stderr
    assert not list(out.rglob("*.json"))
    # and the scheduler itself ends the handshake of a client with no certificate at all
    assert not _scheduler_accepts(deployment.address, deployment.tls.ca_file, None)
    assert _scheduler_accepts(deployment.address, deployment.tls.ca_file, deployment.tls.pairs["client"])


def _scheduler_accepts(address: str, ca_file: Path, pair) -> bool:
    """Whether the scheduler keeps a TLS connection from a client trusting ``ca_file`` with ``pair`` (or none) open
    after the handshake: a refused client sees an alert or the connection closed (TLS 1.3 refuses after it)."""
    import ssl

    host, port = address.removeprefix("tls://").rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(ca_file))
    context.check_hostname = False
    if pair is not None:
        context.load_cert_chain(str(pair.cert), str(pair.key))
    try:
        with socket.create_connection((host, int(port)), timeout=20) as raw, context.wrap_socket(raw) as tls:
            tls.settimeout(3)
            return tls.recv(1) != b""
    except (ssl.SSLError, ConnectionError):
        return False
    except TimeoutError:  # nothing said and nothing closed: a client the scheduler waits to hear from
        return True


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing(deployment, practice_class, graded_with_jobs, tmp_path):
    """SIGKILL to one `dask worker` command's process group (its machine lost) while it grades a submission:
    the other worker grades it, and every submission has exactly one row."""
    folder, zip_path = practice_class
    out = tmp_path / "graded"
    grading = attn_ref_grade(folder, zip_path, out, "--cluster", deployment.address, env=deployment.ta_env, wait=False)
    killed, deadline = None, time.monotonic() + 600
    try:
        while killed is None and time.monotonic() < deadline and grading.poll() is None:
            time.sleep(0.2)
            if not list((out / "results").glob("*.json")):
                continue
            for name in ("worker-a", "worker-b"):
                tree = deployment.started.tree(name)
                if any(GRADER_MARK in _cmdline(p) for p in tree):  # mid-grading a submission
                    killed = (name, deployment.started.kill(name))
                    break
        stdout, stderr = grading.communicate(timeout=900)
    finally:
        if grading.poll() is None:
            grading.kill()
    assert killed is not None, "no worker was found grading to kill"
    assert grading.returncode == 0, stderr
    rows = gradebook(out)
    names = [row["name"] for row in rows]
    assert sorted(names) == sorted({p.stem for p in folder.iterdir()}) and len(names) == len(set(names))
    assert rows == gradebook(graded_with_jobs)
    _, alive = psutil.wait_procs(killed[1], timeout=30)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], "a process of the killed worker lives on"
    if os.geteuid() == 0:  # a killed worker's kernels end through their launchers' death signals: a moment later
        uids, settle = kernel_uids(out) - {None}, time.monotonic() + 30
        while kernel_uid_processes(uids) and time.monotonic() < settle:
            time.sleep(0.5)
        assert not kernel_uid_processes(uids)


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def test_a_ta_without_a_client_certificate_is_told_which_setting_is_missing(tmp_path):
    import dask
    import distributed  # noqa: F401 - its defaults in dask's configuration before a setting is set and restored

    from attn_ref.grade.classroom.cluster import ClusterError
    from attn_ref.grade.classroom.cluster_tls import check_address

    with dask.config.set({"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None}):
        with pytest.raises(ClusterError, match="distributed.comm.tls.client.cert .DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT."):
            check_address("tls://127.0.0.1:8786")
    with dask.config.set({"distributed.comm.tls.ca-file": str(tmp_path / "nowhere.pem"),
                          "distributed.comm.tls.client.cert": str(tmp_path / "nowhere.pem")}):
        with pytest.raises(ClusterError, match="no such readable file"):
            check_address("tls://127.0.0.1:8786")
    (tmp_path / "not-a-cert.pem").write_text("hello")
    os.chmod(tmp_path / "not-a-cert.pem", 0o644)
    with dask.config.set({"distributed.comm.tls.ca-file": str(tmp_path / "not-a-cert.pem"),
                          "distributed.comm.tls.client.cert": str(tmp_path / "not-a-cert.pem")}):
        with pytest.raises(ClusterError, match="can be read by other users.*chmod 600"):
            check_address("tls://127.0.0.1:8786")
    os.chmod(tmp_path / "not-a-cert.pem", 0o600)
    with dask.config.set({"distributed.comm.tls.ca-file": str(tmp_path / "not-a-cert.pem"),
                          "distributed.comm.tls.client.cert": str(tmp_path / "not-a-cert.pem")}):
        with pytest.raises(ClusterError, match="do not load"):
            check_address("tls://127.0.0.1:8786")
