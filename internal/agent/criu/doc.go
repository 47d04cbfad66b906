// Package criu finds and probes CRIU (Checkpoint/Restore In Userspace) and
// builds the command lines the exec driver runs to dump a task's process
// tree into an image directory and to restore it from one.
//
// The agent finds criu by --criu-path or on PATH and runs `criu check`
// once at start; the result (available, version, or why not) is the
// node's checkpoint attribute (api.Node.Checkpoint) that `strata nodes`
// shows and the server consults before it starts a migration.
//
// Images are directories of CRIU image files plus stdio.json, which
// records the pipes the task's stdout and stderr were when it was dumped:
// a restored task gets the new shim's pipes in their place (criu
// --inherit-fd), so its output keeps reaching the task's log.
package criu
