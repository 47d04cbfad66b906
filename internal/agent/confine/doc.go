// Package confine holds the last steps that turn a root process into a
// confined task just before execve: the capability allow-list (bounding,
// ambient, permitted, effective and inheritable sets), no_new_privs and the
// default seccomp profile, as a classic BPF program built in pure Go.
//
// Every function here acts on the calling OS thread only (capabilities,
// seccomp) or on the whole process (setuid, no_new_privs); callers must hold
// runtime.LockOSThread from the first call until execve, so that the thread
// that carries the confinement is the one that becomes the task. It never
// starts processes and never touches cgroups or mounts.
package confine
