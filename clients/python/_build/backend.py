"""A PEP 517 build backend for this package (probnes_client, with its optional Optuna bridge), standard library only.

`pip install ./clients/python` then needs nothing from an index: no setuptools or wheel to fetch
into the isolated build environment (requires = []), so it works offline and in a bare venv.
Builds a wheel (the probnes_client package plus its .dist-info) and an sdist; name and version come
from pyproject.toml's [project] table.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "probnes_client"


def _package_files():
    """The package's modules, as paths relative to HERE (sorted: the archives come out the same every time)."""
    root = os.path.join(HERE, PACKAGE)
    return sorted(PACKAGE + "/" + f for f in os.listdir(root) if f.endswith(".py"))


def _project():
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    table = text.split("[project]", 1)[1].split("\n[", 1)[0]
    field = lambda k: re.search(r'^%s\s*=\s*"([^"]*)"' % k, table, re.M).group(1)
    return {k: field(k) for k in ("name", "version", "description", "requires-python")}


def _metadata(p):
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: %s\nLicense: MIT\n"
        "Description-Content-Type: text/markdown\n\n%s" % (p["name"], p["version"], p["description"], p["requires-python"], readme)
    )


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    dist = "%s-%s" % (p["name"].replace("-", "_"), p["version"])
    info = dist + ".dist-info"
    files = {}
    for name in _package_files():
        with open(os.path.join(HERE, name), "rb") as f:
            files[name] = f.read()
    files[info + "/METADATA"] = _metadata(p).encode("utf-8")
    files[info + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: probnes-client _build/backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    record.append(info + "/RECORD,,")
    files[info + "/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    filename = dist + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    dist = "%s-%s" % (p["name"].replace("-", "_"), p["version"])
    filename = dist + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as t:
        for name in ["pyproject.toml", "README.md", "_build/backend.py"] + _package_files():
            t.add(os.path.join(HERE, name), arcname=dist + "/" + name)
        pkg_info = _metadata(p).encode("utf-8")
        ti = tarfile.TarInfo(dist + "/PKG-INFO")
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    return filename
