"""MPTCP testbed: namespaces, link emulation, workloads, captures, campaigns.

``python -m capture --help`` lists the commands.
"""
