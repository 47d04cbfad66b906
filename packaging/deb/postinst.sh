#!/bin/sh
# strata .deb: after install or upgrade. The services are enabled, not
# started: /etc/strata/*.yaml and the TLS files need this machine's values
# first (docs/install.md). An upgrade restarts what was running, one
# service at a time as the package is installed on each machine.
set -e
if ! getent passwd strata >/dev/null; then
  adduser --system --group --home /var/lib/strata --no-create-home --quiet strata
fi
install -d -m 0755 /var/lib/strata
install -d -m 0700 -o strata -g strata /var/lib/strata/server
install -d -m 0700 /var/lib/strata/agent
# The server (user strata) reads its configuration and TLS files.
chgrp strata /etc/strata /etc/strata/tls /etc/strata/server.yaml 2>/dev/null || true
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  for unit in strata-server strata-agent; do
    if [ "$1" = "configure" ] && [ -z "$2" ]; then
      systemctl enable "$unit.service" >/dev/null 2>&1 || true
    elif systemctl is-active --quiet "$unit.service"; then
      systemctl restart "$unit.service"
    fi
  done
fi
