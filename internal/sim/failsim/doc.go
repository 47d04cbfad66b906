// Package failsim is the simulator's shell around internal/predict: it
// turns failure traces into the streams the model learns from and is
// judged on, and replays failures on a simulated fleet.
//
//   - Drives (smart.go, drives.go): a Backblaze drive-stats table becomes a
//     predict.Source; Drives trains the failure model on one stream and
//     scores it, with the naive SMART rule beside it, on another
//     (`strata sim failures`).
//   - Fleet (fleet.go, replay.go): Alibaba's SSD failure tickets replayed
//     on a fleet whose nodes and racks are the tickets' own, with replica
//     groups placed on it, once with reactive replacement on a
//     rack-oblivious placement and once with the correlated-failure model
//     steering placement and draining ahead (`strata sim correlated`).
//   - On a cell (oncell.go, forecaster.go): the tickets laid onto a
//     simulated cell's nodes in rack order, and the correlated-failure
//     model that learns from them as simulated time passes and answers
//     each node's forecast (churn mode's --failures, strata-predictive).
//
// It is deterministic (seeds are arguments, no clock is read) and does no
// I/O: callers load the traces (internal/sim/trace) and print the results.
// It must never let a policy see a failure before its time.
package failsim
