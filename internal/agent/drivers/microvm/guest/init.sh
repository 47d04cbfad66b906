#!/.strata/busybox sh
# Strata micro-VM init: PID 1 of the guest, from the initramfs the microvm
# driver builds (docs/drivers.md). It mounts the kernel file systems, runs
# the task's command with the image's root file system as / and the serial
# console as its stdout and stderr, and reports on the console:
#   $STRATA_BOOTED            once userspace runs (the host times the boot)
#   $STRATA_EXIT <code>       when the command ended, then powers off.
# A line $STRATA_STOP written by the host to the console asks it to stop:
# the command gets SIGTERM. Only busybox (in /.strata) is used, so images
# without a shell work.
BB=/.strata/busybox
$BB mkdir -p /proc /sys /dev /tmp /run
$BB mount -t proc proc /proc
$BB mount -t sysfs sysfs /sys
$BB mount -t devtmpfs devtmpfs /dev
$BB mkdir -p /dev/pts /dev/shm
$BB mount -t devpts devpts /dev/pts
$BB mount -t tmpfs tmpfs /dev/shm
$BB ip link set lo up 2>/dev/null
. /.strata/task
$BB hostname "$STRATA_HOSTNAME"
# No echo of the host's stop line, no CR before LF in the task's output.
$BB stty -F /dev/console -echo -onlcr 2>/dev/null
echo "$STRATA_BOOTED"
(
  cd "$STRATA_WORKDIR" || exit 126
  exec $BB env -i "$@"
) </dev/null &
task=$!
(
  while read -r line; do
    if [ "$line" = "$STRATA_STOP" ]; then $BB kill -TERM "$task"; fi
  done
) </dev/console &
wait "$task"
code=$?
echo "$STRATA_EXIT $code"
$BB sync
$BB poweroff -f
