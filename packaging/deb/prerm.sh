#!/bin/sh
# strata .deb: before removal (not before an upgrade, which restarts the
# services after it). Stopping the agent leaves its tasks running.
set -e
if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then
  for unit in strata-agent strata-server; do
    systemctl stop "$unit.service" >/dev/null 2>&1 || true
    systemctl disable "$unit.service" >/dev/null 2>&1 || true
  done
fi
