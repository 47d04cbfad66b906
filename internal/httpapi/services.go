package httpapi

import (
	"cmp"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// The built-in service registry: a read-only view over allocations, so it
// needs no table of its own and can never disagree with them. A service's
// endpoints are the healthy allocations (api.Allocation.Healthy) whose
// group offers it, at the port the scheduler gave them, on nodes not down. Both endpoints are
// blocking queries on the allocation and node tables: any change to
// either wakes a watcher, who compares what it gets with what it has.

// handleListServices answers GET /v1/services: every service any wanted
// allocation of the request's namespace offers, with its healthy and total
// counts. A service belongs to its workload's namespace: one tenant never
// sees another's endpoints.
func (s *API) handleListServices(w http.ResponseWriter, r *http.Request) error {
	ns, err := namespaceOf(r)
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		snap.NodesWatch(ws)
		out := listServices(allocsIn(ns, snap.Allocs(ws)), snap.Node)
		return out, registryIndex(snap, ws), nil
	})
}

// handleService answers GET /v1/services/{name}: the service's healthy
// endpoints, sorted by workload, group and allocation. A service nobody
// offers has no endpoints (an empty list, not a 404), so a client may
// watch a name before its workload is submitted.
func (s *API) handleService(w http.ResponseWriter, r *http.Request) error {
	name, ns, err := nameInNamespace(r, "name")
	if err != nil {
		return err
	}
	return s.serveBlocking(w, r, func(snap *state.Snapshot, ws memdb.WatchSet) (any, uint64, error) {
		snap.NodesWatch(ws)
		out := serviceEndpoints(name, allocsIn(ns, snap.Allocs(ws)), snap.Node)
		return out, registryIndex(snap, ws), nil
	})
}

// allocsIn keeps the allocations of namespace ns.
func allocsIn(ns string, allocs []*api.Allocation) []*api.Allocation {
	out := allocs[:0:0]
	for _, a := range allocs {
		if api.NamespaceOf(a.Namespace) == ns {
			out = append(out, a)
		}
	}
	return out
}

func registryIndex(snap *state.Snapshot, ws memdb.WatchSet) uint64 {
	return max(snap.TableIndex(ws, state.TableAllocs), snap.TableIndex(ws, state.TableNodes))
}

// serviceEndpoints lists the healthy endpoints of service name.
func serviceEndpoints(name string, allocs []*api.Allocation, node func(string) *api.Node) []api.ServiceEndpoint {
	out := []api.ServiceEndpoint{}
	for _, a := range allocs {
		if a.TaskGroup == nil || !a.Healthy() {
			continue
		}
		for _, svc := range a.TaskGroup.Services {
			if svc.Name != name {
				continue
			}
			n, port := listed(a, svc, node)
			if n == nil {
				continue
			}
			out = append(out, api.ServiceEndpoint{
				Service: name, Address: nodeAddress(n), Port: port,
				AllocID: a.ID, Workload: a.Workload, Group: a.Group, NodeID: a.NodeID, NodeName: a.NodeName,
				Tags: svc.Tags, Labels: svc.Labels,
			})
		}
	}
	slices.SortFunc(out, func(x, y api.ServiceEndpoint) int {
		return cmp.Or(strings.Compare(x.Workload, y.Workload), strings.Compare(x.Group, y.Group), strings.Compare(x.AllocID, y.AllocID))
	})
	return out
}

// listed returns the node and port at which a healthy allocation a offers
// svc, or nil when it is not listed: the port is missing (placed before
// the group had it: nothing listens) or the node is down (its last report
// is stale).
func listed(a *api.Allocation, svc api.Service, node func(string) *api.Node) (*api.Node, int) {
	port := a.Port(svc.Port)
	if port == 0 {
		return nil, 0
	}
	n := node(a.NodeID)
	if n == nil || n.Status == api.NodeDown {
		return nil, 0
	}
	return n, port
}

// listServices summarises every service offered by a wanted allocation.
func listServices(allocs []*api.Allocation, node func(string) *api.Node) []api.ServiceSummary {
	byName := map[string]*api.ServiceSummary{}
	for _, a := range allocs {
		if a.TaskGroup == nil || a.DesiredStatus != api.DesiredRun || a.Terminal() {
			continue
		}
		for _, svc := range a.TaskGroup.Services {
			sum := byName[svc.Name]
			if sum == nil {
				sum = &api.ServiceSummary{Name: svc.Name, Workloads: []string{}}
				byName[svc.Name] = sum
			}
			sum.Instances++
			if n, _ := listed(a, svc, node); a.Healthy() && n != nil {
				sum.Healthy++
			}
			if !slices.Contains(sum.Workloads, a.Workload) {
				sum.Workloads = append(sum.Workloads, a.Workload)
			}
		}
	}
	out := []api.ServiceSummary{}
	for _, sum := range byName {
		slices.Sort(sum.Workloads)
		out = append(out, *sum)
	}
	slices.SortFunc(out, func(x, y api.ServiceSummary) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// nodeAddress is the address a node's tasks are reached at: the host of
// the agent's advertised HTTP address (tasks share the node's network).
func nodeAddress(n *api.Node) string {
	if n == nil || n.HTTPAddr == "" {
		return ""
	}
	u, err := url.Parse(n.HTTPAddr)
	if err != nil {
		return ""
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "" // bound to every address: none to advertise
	}
	return host
}
