"""pvesim: a simulated Proxmox VE 9.2 API for testing ferro.proxmox, built on fakepve 0.5.0."""

__version__ = '0.1.0'
