package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/spec"
)

// Task logs live on the agents; the server relays them, from the node's
// registered address only, and only what proves it comes from the node's
// agent (nodeauth's signed request and proof).

// handleAllocLogs streams a task's log from the agent that runs it.
func (s *API) handleAllocLogs(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	q := route.NewQuery(r)
	task := q.Checked("task", spec.CheckName)
	stream := q.OneOf("stream", "stdout", "stderr")
	follow := q.Boolean("follow")
	offset := q.NonNegative("offset")
	ns := q.Namespace()
	if err := q.Err(); err != nil {
		return err
	}
	snap := s.state().Snapshot()
	a, err := findAlloc(snap, ns, id)
	if err != nil {
		return err
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
		return route.NotFound("task %q not in allocation %s (tasks: %v)", task, a.ID, names)
	}
	n := snap.Node(a.NodeID)
	if n == nil || n.HTTPAddr == "" {
		return &route.Error{Status: http.StatusBadGateway, Code: "agent-unreachable", Msg: fmt.Sprintf("node %s of allocation %s has no agent address", a.NodeID, a.ID)}
	}
	if err := s.checkAgentScheme(n.HTTPAddr); err != nil {
		// Registered so by an older server: never dialled in the clear.
		return &route.Error{Status: http.StatusBadGateway, Code: "agent-unreachable",
			Msg: fmt.Sprintf("node %s of allocation %s registered the plaintext address %s in a TLS cell: its agent must register again over TLS", n.Name, a.ID, n.HTTPAddr)}
	}
	key := snap.NodeKey(n.ID)
	if key == nil {
		return &route.Error{Status: http.StatusBadGateway, Code: "agent-unreachable",
			Msg: fmt.Sprintf("node %s of allocation %s has no identity: logs are fetched only from an agent that registered with the join token", n.ID, a.ID)}
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
		return err
	}
	nonce := nodeauth.NewNonce(s.cfg.Now())
	req.Header.Set(nodeauth.HeaderNonce, nonce)
	req.Header.Set(nodeauth.HeaderSignature, nodeauth.SignRequest(key.Verifier, nonce, uri))
	resp, err := s.agentHTTP.Do(req)
	if err != nil {
		return &route.Error{Status: http.StatusBadGateway, Code: "agent-unreachable", Msg: fmt.Sprintf("agent of node %s: %v", n.Name, err)}
	}
	if !nodeauth.CheckProof(key.Verifier, nonce, resp.Header.Get(nodeauth.HeaderProof)) {
		// Whatever answers at the registered address is not the node's
		// agent (or not one that holds its secret): none of it is relayed.
		resp.Body.Close()
		s.logger.Warn("log fetch: the answer did not prove the node", "node", n.ID, "addr", n.HTTPAddr, "status", resp.StatusCode)
		return &route.Error{Status: http.StatusBadGateway, Code: "agent-unproven",
			Msg: fmt.Sprintf("the answer from %s did not prove it comes from node %s's agent (%s); nothing of it is relayed", n.HTTPAddr, n.ID, resp.Status)}
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
				return nil
			}
		}
		if rerr != nil {
			return nil
		}
	}
}
