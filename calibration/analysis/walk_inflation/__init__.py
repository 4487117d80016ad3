"""One path walker beside containerd's mount ops (walk_bench): what the line transfers inside
mount_lock's sections predict, against what was measured."""
