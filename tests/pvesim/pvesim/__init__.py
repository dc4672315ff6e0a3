"""pvesim: a simulated Proxmox VE 9.2 API for testing ferro.proxmox and your own playbooks, built on fakepve 0.5.0."""

from importlib import metadata

try:
    __version__ = metadata.version('pvesim')   # the collection's version (galaxy.yml), _build/backend.py
except metadata.PackageNotFoundError:           # pragma: no cover - run from a checkout without installing
    __version__ = 'unknown'
