package server

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/state"
)

func (s *Server) handleListAllocs(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	workload := q.checked("workload", spec.CheckName)
	ns := q.namespace()
	stub := q.boolean("stub") // a long list's lines, in columns (api.AllocationTable)
	if err := q.err(); err != nil {
		s.fail(w, err)
		return
	}
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		var out []*api.Allocation
		if workload != "" {
			out = snap.AllocsByWorkloadWatch(ws, ns, workload)
			if out == nil && snap.Workload(ns, workload) == nil {
				return nil, 0, notFound("workload %q not found in namespace %q", workload, ns)
			}
		} else {
			for _, a := range snap.Allocs(ws) {
				if api.NamespaceOf(a.Namespace) == ns {
					out = append(out, a)
				}
			}
		}
		out = snap.Current(out) // never a purged predecessor's beside its successor's
		if stub {
			return allocTable(out), snap.TableIndex(ws, state.TableAllocs), nil
		}
		if out == nil {
			out = []*api.Allocation{}
		}
		return redactAllocs(out), snap.TableIndex(ws, state.TableAllocs), nil
	})
}

// allocTable is the lines of a long list: no spec, so nothing to redact.
func allocTable(allocs []*api.Allocation) api.AllocationTable {
	out := api.AllocationTable{Stubs: make([]api.AllocationStub, len(allocs))}
	for i, a := range allocs {
		out.Stubs[i] = a.Stub()
	}
	return out
}

// findAlloc resolves an allocation id or a unique prefix of one, among
// namespace ns's allocations.
func findAlloc(snap *state.Snapshot, ns, id string) (*api.Allocation, error) {
	if a := snap.Alloc(id); a != nil && api.NamespaceOf(a.Namespace) == ns {
		return a, nil
	}
	if id == "" {
		return nil, notFound("allocation id is empty")
	}
	var matches []*api.Allocation
	for _, a := range snap.AllocsByIDPrefix(id) {
		if api.NamespaceOf(a.Namespace) == ns {
			matches = append(matches, a)
		}
	}
	switch len(matches) {
	case 0:
		return nil, notFound("allocation %q not found in namespace %q", id, ns)
	case 1:
		return matches[0], nil
	}
	return nil, badRequest("allocation prefix %q is ambiguous: %d allocations match", id, len(matches))
}

func (s *Server) handleGetAlloc(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := checkRequestNamespace(r); err != nil {
		s.fail(w, err)
		return
	}
	ns := requestNamespace(r)
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		a, err := findAlloc(snap, ns, id)
		if err != nil {
			return nil, 0, err
		}
		return redactAlloc(a), snap.TableIndex(ws, state.TableAllocs), nil
	})
}

// handleAllocLogs streams a task's log from the agent that runs it.
func (s *Server) handleAllocLogs(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	q := newQuery(r)
	task := q.checked("task", spec.CheckName)
	stream := q.oneOf("stream", "stdout", "stderr")
	follow := q.boolean("follow")
	offset := q.nonNegative("offset")
	ns := q.namespace()
	if err := q.err(); err != nil {
		s.fail(w, err)
		return
	}
	snap := s.State().Snapshot()
	a, err := findAlloc(snap, ns, id)
	if err != nil {
		s.fail(w, err)
		return
	}
	if task == "" && a.TaskGroup != nil && len(a.TaskGroup.Tasks) > 0 {
		task = a.TaskGroup.Tasks[0].Name
	}
	known := false
	var names []string
	if a.TaskGroup != nil {
		for _, t := range a.TaskGroup.Tasks {
			names = append(names, t.Name)
			known = known || t.Name == task
		}
	}
	if !known {
		sort.Strings(names)
		s.fail(w, notFound("task %q not in allocation %s (tasks: %v)", task, a.ID, names))
		return
	}
	n := snap.Node(a.NodeID)
	if n == nil || n.HTTPAddr == "" {
		s.fail(w, &httpError{status: http.StatusBadGateway, code: "agent-unreachable", msg: fmt.Sprintf("node %s of allocation %s has no agent address", a.NodeID, a.ID)})
		return
	}
	key := snap.NodeKey(n.ID)
	if key == nil {
		s.fail(w, &httpError{status: http.StatusBadGateway, code: "agent-unreachable",
			msg: fmt.Sprintf("node %s of allocation %s has no identity: logs are fetched only from an agent that registered with the join token", n.ID, a.ID)})
		return
	}
	fwd := url.Values{"task": {task}}
	if stream != "" {
		fwd.Set("stream", stream)
	}
	if follow {
		fwd.Set("follow", "true")
	}
	if offset > 0 {
		fwd.Set("offset", strconv.FormatInt(offset, 10))
	}
	uri := "/v1/agent/allocations/" + url.PathEscape(a.ID) + "/logs?" + fwd.Encode()
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, n.HTTPAddr+uri, nil)
	if err != nil {
		s.fail(w, err)
		return
	}
	nonce := nodeauth.NewNonce(s.cfg.Now())
	req.Header.Set(nodeauth.HeaderNonce, nonce)
	req.Header.Set(nodeauth.HeaderSignature, nodeauth.SignRequest(key.Verifier, nonce, uri))
	resp, err := s.agentHTTP.Do(req)
	if err != nil {
		s.fail(w, &httpError{status: http.StatusBadGateway, code: "agent-unreachable", msg: fmt.Sprintf("agent of node %s: %v", n.Name, err)})
		return
	}
	if !nodeauth.CheckProof(key.Verifier, nonce, resp.Header.Get(nodeauth.HeaderProof)) {
		// Whatever answers at the registered address is not the node's
		// agent (or not one that holds its secret): none of it is relayed.
		resp.Body.Close()
		s.logger.Warn("log fetch: the answer did not prove the node", "node", n.ID, "addr", n.HTTPAddr, "status", resp.StatusCode)
		s.fail(w, &httpError{status: http.StatusBadGateway, code: "agent-unproven",
			msg: fmt.Sprintf("the answer from %s did not prove it comes from node %s's agent (%s); nothing of it is relayed", n.HTTPAddr, n.ID, resp.Status)})
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		if k != nodeauth.HeaderProof {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	// A followed log lasts as long as the user watches; the write timeout
	// then bounds only a reader that stopped reading.
	out := httplimit.Stream(w, s.cfg.HTTP.WithDefaults().WriteTimeout)
	buf := make([]byte, 32<<10)
	for {
		nr, rerr := resp.Body.Read(buf)
		if nr > 0 {
			if _, werr := out.Write(buf[:nr]); werr != nil {
				return
			}
		}
		if rerr != nil {
			return
		}
	}
}

func (s *Server) handleListEvals(w http.ResponseWriter, r *http.Request) {
	if err := checkRequestNamespace(r); err != nil {
		s.fail(w, err)
		return
	}
	ns := requestNamespace(r)
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		out := []*api.Evaluation{}
		for _, e := range snap.CurrentEvals(snap.Evals(ws)) { // a purged workload's leave the listing
			if api.NamespaceOf(e.Namespace) == ns {
				out = append(out, e)
			}
		}
		return out, snap.TableIndex(ws, state.TableEvals), nil
	})
}

func (s *Server) handleGetEval(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := checkRequestNamespace(r); err != nil {
		s.fail(w, err)
		return
	}
	ns := requestNamespace(r)
	s.serveBlocking(w, r, func(snap *state.Snapshot, ws watchSet) (any, uint64, error) {
		if e := snap.Eval(id); e != nil && api.NamespaceOf(e.Namespace) == ns {
			return e, snap.TableIndex(ws, state.TableEvals), nil
		}
		var m []*api.Evaluation
		for _, e := range snap.EvalsByIDPrefix(id) {
			if api.NamespaceOf(e.Namespace) == ns {
				m = append(m, e)
			}
		}
		switch {
		case len(m) == 1:
			return m[0], snap.TableIndex(ws, state.TableEvals), nil
		case len(m) > 1:
			return nil, 0, badRequest("evaluation prefix %q is ambiguous: %d evaluations match", id, len(m))
		}
		return nil, 0, notFound("evaluation %q not found in namespace %q", id, ns)
	})
}
