// Package stats holds the few pieces of probability the cell's own
// judgements rest on: binomial tails (is a node, a rack or a version
// over-represented among failures?), Fisher's combination of independent
// tests, robust location and scale (median, MAD). Everything is a pure
// function of its arguments, computed in log space where tails get small,
// so that evidence of 1e-400 is still ordered against 1e-300.
//
// It must never hold state, read a clock or draw from a source of its own
// (PoissonDraw, for simulations, takes the caller's): the callers
// (internal/quarantine, internal/incident, internal/rolloutguard,
// internal/anomaly) are deterministic cores and rely on that.
package stats
