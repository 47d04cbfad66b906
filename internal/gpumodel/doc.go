// Package gpumodel decides whether a GPU model a workload asks for (a
// pattern such as "A100", "A100-80GB" or "nvidia h100") accepts a GPU
// its node fingerprinted ("NVIDIA A100-SXM4-80GB"). The rules are
// documented in docs/devices.md and here on Match: vendor and brand words
// and case do not matter, the family must be the same (after aliases), a
// memory size in the pattern narrows it, and every other word of the
// pattern (a form factor such as "sxm4") must appear in the model.
//
// It is pure (no I/O, no globals that change) so that the scheduler, the
// fragmentation measure and the agent all judge a model alike. It must
// never accept a model whose family differs from the pattern's: "A10"
// never matches an "A100".
package gpumodel
