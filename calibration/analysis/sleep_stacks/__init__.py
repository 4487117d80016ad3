"""The workers' sleeps by kernel stack, the vCPUs' use, co-run and interrupts, woken waits."""
