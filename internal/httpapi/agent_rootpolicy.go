package httpapi

import (
	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// withRootPolicy is a copy of a, as its agent receives it, that carries
// its namespace's root policy as snap has it (api.Allocation.AllowRootTasks):
// the submission check reads the user field's text, the node checks the
// ids it resolves (a name that is uid 0 there, an image's user) against
// the same policy. The default namespace allows root until a record for
// it is applied (admitToNamespace). The stored allocation is not changed.
func withRootPolicy(snap *state.Snapshot, a *api.Allocation) *api.Allocation {
	ns := api.NamespaceOf(a.Namespace)
	allow := ns == api.DefaultNamespace
	if n := snap.Namespace(ns); n != nil {
		allow = n.AllowRootTasks
	}
	if a.AllowRootTasks == allow {
		return a
	}
	c := *a
	c.AllowRootTasks = allow
	return &c
}
