// Package rolloutguard decides whether a deployment's new version is bad
// while it rolls out: whether its copies fail to start, or are in trouble
// (fail, are OOM-killed, restart, fail health checks) more often than the
// old version's copies running beside them, or more often than the old
// version was before the deployment. A bad verdict pauses or reverts the
// deployment before it finishes (docs/incidents.md); the anchor is Azure's
// Gandalf (NSDI '20), which blocked bad rollouts with 92.4 % precision and
// 100 % recall.
//
// Every judgement is a sequential test with a guaranteed error rate, not a
// threshold (sprt.go): a mixture likelihood ratio over a range of effect
// sizes, which stays below 1/α with probability at least 1 − α for as
// long as the version is as good as its baseline (Ville's inequality), so
// the guard may look after every event and still blames a good version
// with probability at most α. Three tests run, on all the version's copies
// and on each class of node apart (a version that fails only on one CPU
// feature), Bonferroni-corrected:
//
//   - failed starts: a start of the new version that fails within
//     StartWindow, against the old version's start failure rate (an upper
//     confidence bound of it);
//   - beside the old: each trouble event after the start window falls on
//     the new version with probability equal to the new version's share of
//     the running copies at that moment, if the versions are alike; a
//     cell-wide surge shifts both alike and blames neither;
//   - against the past: the new version's trouble rate per copy-hour
//     against the old version's before the deployment (an upper
//     confidence bound), which keeps watching once no old copy is left.
//
// Trouble that the cell explains otherwise — an infrastructure incident of
// internal/incident (a rack, a node, a power zone) — is not held against
// the version: every event waits Settle for the correlation to see it. A
// verdict also needs MinAllocs copies on MinNodes nodes: one node's fault
// is the node's.
//
// A Guard is a deterministic core: the caller tells it what started,
// stopped and went wrong, with times, and asks Judge; it has no clock, no
// I/O, no goroutines, and is not safe for concurrent use. It never acts on
// the deployment itself: the caller pauses or reverts on its verdict.
package rolloutguard
