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
//
// Why not containerd/cgroups (in the module graph through containerd):
// that library manages one cgroup per hierarchy as runc lays them out,
// from an OCI LinuxResources. The exec driver needs what it does not: the
// hybrid v1 host whose unified mount holds only hugetlb (a task joins a
// group there beside its v1 groups), cgroup.kill with a v1 fallback that
// confirms the group is empty, devices denied by an eBPF program the
// driver builds from the node's device list, the shared-core cpuset
// rewritten in place under many parents (sharedcores), cpu-quota lifting
// during a criu restore, and reads of the OOM counter and of usage that
// work on whatever the task left behind. Containers get their cgroups
// from runc through containerd (spec.go), as that library would give
// them; a resize of one goes through containerd too (runc update).
package cgroup
