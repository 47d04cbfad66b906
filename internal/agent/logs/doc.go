// Package logs owns a task's log files: a size-bounded rotating Writer
// (stdout.log, stdout.log.1, … up to a file count) used by the task shim,
// and Stream, which reads a stream across its rotated files in order and can
// follow it as it grows and rotates.
//
// Offsets are byte positions in the retained data of a stream (oldest kept
// file first); bytes dropped by rotation are gone. The package never reads
// or writes outside the directory it is given.
package logs
