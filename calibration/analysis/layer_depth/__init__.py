"""What one more ancestor of an overlay's layer roots costs: mount_bench --layer-depth runs."""
