// Package predict estimates the probability that a unit of hardware — a
// drive or a node — fails within a horizon, from the health signals the
// cell collects about it: disk SMART attributes, kernel and hardware error
// counters (EDAC, MCE, I/O errors) and Strata's own history of the node
// (task failures, OOM kills, restarts, heartbeat gaps, past downs).
//
// What it owns:
//
//   - the vocabulary of signals (Signal) and one day's readings of a unit
//     (Reading), where a signal the unit did not report is absent, never 0;
//   - a unit's recent past (History) and the features derived from it
//     (Features: levels, growth over a window, the power-on clock's rate,
//     gaps between reports), each absent when its inputs are;
//   - a learned model (Model): gradient-boosted depth-2 trees on those
//     features with logistic loss, trained in pure Go (Train), with a
//     learned direction for absent values at every split, and an operating
//     threshold chosen on training data only (cross-fitted by unit);
//   - the naive SMART rule the model is measured against (SmartRule);
//   - the drive-level scoring of a policy over days (Evaluate: recall,
//     false-positive rate, lead time);
//   - correlated failure (Correlated): a node's and its rack's risk raised
//     after a failure, with the rates learned from past failures only.
//
// Everything is deterministic: the same readings and seed give the same
// model, bit for bit, and the package reads no clock (days are numbers the
// caller passes), opens no file and starts no goroutine. The simulator
// (`strata sim failures`) and, later, the cell's leader loop are thin
// shells that feed it readings and act on its scores.
//
// It must never treat an unreported signal as a healthy zero, never look at
// a reading later than the day it scores, and never choose a threshold on
// the data it is evaluated on.
package predict
