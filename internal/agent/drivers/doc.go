// Package drivers holds the plain data that the agent's task runners and the
// task drivers (exec, microvm, mock) exchange: what to start (TaskConfig), what must be
// persisted to find a running task again after an agent restart (TaskHandle),
// and how a task ended (ExitResult).
//
// It owns no behaviour and must never import the agent or a driver
// implementation; the Driver interface itself is defined by its user,
// package agent.
package drivers
