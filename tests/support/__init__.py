"""Test support shared by the e2e tests and the soak: one interface to LocalApiServer and to a
real kube-apiserver (cluster.py), and a TCP proxy that cuts connections (tcp_proxy.py)."""
