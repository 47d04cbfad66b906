// Package fingerprint discovers what a node offers: CPUs and NUMA layout
// (sysfs node directories), memory (/proc/meminfo), free disk (statfs of the
// data dir), NVIDIA GPUs (nvidia-smi), huge page pools (sysfs), memory
// tiers (a NUMA node without CPUs is the slow tier) and the CPU's
// architecture and ISA extensions (/proc/cpuinfo). The parsers are pure functions
// over a root directory or command output so they are tested with fixtures.
//
// It only reads; it must never change the host, and a missing optional
// source (no NUMA directories, no nvidia-smi) is not an error.
package fingerprint
