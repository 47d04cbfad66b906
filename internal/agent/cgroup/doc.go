// Package cgroup creates, limits, inspects and removes the cgroup of one
// task, on cgroup v1 (one hierarchy per controller, including hybrid hosts
// whose unified mount carries no controllers) and on pure cgroup v2, behind
// the Group interface.
//
// Task cgroups live at <root>/<controller>/strata/<allocID>/<task> on v1 and
// at <root>/strata/<allocID>/<task> on v2. The package only touches the
// directories it is given: it must never write to a cgroup outside the
// "strata" parent except to enable controllers on v2 ancestors, and never
// signal a process that is not in one of its groups.
package cgroup
