"""Real readers of /proc/self/mountinfo: the read() chunks they ask for and get."""
