// Package ctrtest gives tests a containerd daemon, images and a registry
// without downloading anything: the daemon named by $STRATA_CONTAINERD_SOCKET
// (CI starts one) or a private one started for the test, OCI archives built
// with umoci from Debian's static busybox, and Debian's docker-registry on
// loopback. Every helper skips the test, with the reason, when it is not
// root or a tool is missing; CI installs them all, so there they run.
package ctrtest
