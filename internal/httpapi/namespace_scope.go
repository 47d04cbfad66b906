package httpapi

import (
	"fmt"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

// Tenants (docs/tenants.md). Every request that reads or writes workloads,
// allocations, evaluations or events is in one namespace: ?namespace=,
// DefaultNamespace when absent, so the paths of before namespaces keep
// working for the default one. The ACL layer checks capabilities in that
// namespace, and the handlers serve only that namespace's objects: an
// allocation of another namespace named by id is "not found", as it would
// be for a token that may not see it.

// requestNamespace is the namespace a request is in; a malformed one is
// the default (the handler's own query check answers 400 for it).
func requestNamespace(r *http.Request) string {
	ns := r.URL.Query().Get(api.QueryNamespace)
	if ns == "" || spec.CheckName(ns) != "" {
		return api.DefaultNamespace
	}
	return ns
}

// namespaceOf is the request's namespace, or the 400 for a malformed one.
func namespaceOf(r *http.Request) (string, error) {
	if err := checkRequestNamespace(r); err != nil {
		return "", err
	}
	return requestNamespace(r), nil
}

// idInNamespace reads the path parameter param as an id (route.PathID)
// and the request's namespace.
func idInNamespace(r *http.Request, param string) (id, ns string, err error) {
	if id, err = route.PathID(r, param); err != nil {
		return "", "", err
	}
	ns, err = namespaceOf(r)
	return id, ns, err
}

// nameInNamespace reads the path parameter param as a name
// (route.PathName) and the request's namespace.
func nameInNamespace(r *http.Request, param string) (name, ns string, err error) {
	if name, err = route.PathName(r, param); err != nil {
		return "", "", err
	}
	ns, err = namespaceOf(r)
	return name, ns, err
}

// checkRequestNamespace is the 400 for a malformed ?namespace=, or nil.
func checkRequestNamespace(r *http.Request) error {
	q := route.NewQuery(r)
	q.Namespace()
	return q.Err()
}

// intoRequestNamespace puts a submitted (or planned) workload in the
// request's namespace and admits it there. The request's namespace is the
// one the ACLs checked: a workload that names another is refused, never
// moved there.
func intoRequestNamespace(r *http.Request, snap *state.Snapshot, wl *api.Workload) (string, error) {
	ns, err := namespaceOf(r)
	if err != nil {
		return "", err
	}
	if wl.Namespace != "" && wl.Namespace != ns {
		return "", route.FieldError("namespace-mismatch", "metadata.namespace",
			"the workload names namespace %q but the request is in namespace %q (?namespace=, strata -n)", wl.Namespace, ns)
	}
	wl.Namespace = ns
	return ns, admitToNamespace(snap, wl)
}

// inNamespace is notFound for an object of another namespace than the
// request's.
func inNamespace(objNS, reqNS, what, id string) error {
	if api.NamespaceOf(objNS) != reqNS {
		return route.NotFound("%s %q not found in namespace %q", what, id, reqNS)
	}
	return nil
}

// admitToNamespace checks a submitted workload against its namespace, as
// the namespace is in snap: the namespace exists (the default one always
// does), the workload's priority is within the quota's maxPriority, and
// every group could fit the quota with the namespace otherwise empty. A
// workload that passes may still wait for its quota (the scheduler keeps
// its groups pending with the reason), but it never waits forever for
// want of a quota that cannot hold it. The error names the field.
func admitToNamespace(snap *state.Snapshot, wl *api.Workload) error {
	ns := api.NamespaceOf(wl.Namespace)
	n := snap.Namespace(ns)
	if n == nil {
		if ns == api.DefaultNamespace {
			return nil
		}
		return route.FieldError("unknown-namespace", "metadata.namespace",
			"namespace %q does not exist; a cell manager creates it with `strata namespace apply`", ns)
	}
	if !n.AllowRootTasks {
		for i, g := range wl.Groups {
			for j, t := range g.Tasks {
				if t.AsksForRoot() {
					return route.FieldError("root-not-allowed", fmt.Sprintf("spec.groups[%d].tasks[%d].user", i, j),
						"task %s asks for user %q, but namespace %q does not allow root tasks (a cell manager sets allowRootTasks on it)", t.Name, t.User, ns)
				}
			}
		}
	}
	q := n.Quota
	if q == nil {
		return nil
	}
	if q.MaxPriority != nil && wl.Priority > *q.MaxPriority {
		return route.FieldError("quota-exceeded", "spec.priority",
			"priority %d (class %s) is above namespace %q's quota.maxPriority %d", wl.Priority, wl.PriorityClass, ns, *q.MaxPriority)
	}
	var total api.QuotaUsage
	for i, g := range wl.Groups {
		one := api.UsageOf(g.Resources())
		if why := q.Exceeded(one); why != "" {
			return route.FieldError("quota-exceeded", fmt.Sprintf("spec.groups[%d]", i),
				"one replica of group %s can never fit namespace %q's quota: %s", g.Name, ns, why)
		}
		all := one.Times(int64(g.Replicas))
		if why := q.Exceeded(all); why != "" {
			return route.FieldError("quota-exceeded", fmt.Sprintf("spec.groups[%d].replicas", i),
				"%d replicas of group %s can never fit namespace %q's quota: %s", g.Replicas, g.Name, ns, why)
		}
		total = total.Add(all)
	}
	if why := q.Exceeded(total); why != "" {
		return route.FieldError("quota-exceeded", "spec.groups",
			"the workload's groups together can never fit namespace %q's quota: %s", ns, why)
	}
	return nil
}
