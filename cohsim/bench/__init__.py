"""The real benchmarks: building and running pause_bench, mount_bench and wake_bench on the real
kernel (`runner`), the facts of the host they ran on (`hostinfo`).
"""
