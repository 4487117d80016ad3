"""Where the mount calls' time goes, from mount_trace.sh traces (analyse, overlap, gp_spans)."""
