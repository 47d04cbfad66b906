package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"

	"github.com/strata-dev/strata/internal/agent/logs"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/pki"
)

// routes is the agent's own HTTP API. Over TLS, a scraper's certificate
// (pki.RoleScrape) reaches /metrics and nothing else.
func (a *Agent) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /v1/agent/health", onlyPeers(http.HandlerFunc(a.handleHealth), pki.RoleServer))
	mux.Handle("GET /v1/agent/allocations/{id}/logs", onlyPeers(http.HandlerFunc(a.handleLogs), pki.RoleServer))
	mux.Handle("PUT /v1/agent/migrations/{id}", onlyPeers(http.HandlerFunc(a.handleReceiveImage), pki.RoleAgent))
	mux.Handle("GET /metrics", onlyPeers(a.metricsHandler(), pki.RoleServer, pki.RoleScrape))
	return mux
}

// onlyPeers serves a request over TLS only from a peer whose certificate
// has one of roles (the listener already checked it is of the cell's CA):
// servers read logs, agents send migration images, scrapers read
// /metrics. A plaintext agent has
// no certificates to tell peers apart by; its routes stay as they are.
func onlyPeers(h http.Handler, roles ...pki.Role) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			var role pki.Role
			if len(r.TLS.PeerCertificates) > 0 {
				role = pki.RoleOf(r.TLS.PeerCertificates[0])
			}
			if !slices.Contains(roles, role) {
				writeJSON(w, http.StatusForbidden, api.ErrorResponse{Code: "forbidden",
					Error: fmt.Sprintf("%s: a %q certificate cannot use this route of the agent (it takes %v)", r.URL.Path, role, roles)})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// writeError answers like the server does: a message, a stable code and,
// for a bad parameter, the parameter named in fields.
func writeError(w http.ResponseWriter, status int, msg string) {
	code := "not-found"
	if status == http.StatusBadRequest {
		code = "invalid-parameter"
	}
	writeJSON(w, status, map[string]string{"error": msg, "code": code})
}

func badParam(w http.ResponseWriter, name, msg string) {
	writeJSON(w, http.StatusBadRequest, api.ErrorResponse{Error: name + ": " + msg, Code: "invalid-parameter",
		Fields: []api.FieldError{{Path: name, Message: msg}}})
}

func (a *Agent) handleHealth(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	n := len(a.allocs)
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "nodeId": a.nodeID, "allocations": n,
		"cell": a.CellStatus()})
}

// handleLogs streams a task's stdout or stderr across its rotated files.
// With follow=true it keeps streaming until the client goes away or the task
// is dead and its log fully read.
func (a *Agent) handleLogs(w http.ResponseWriter, r *http.Request) {
	if !a.checkServerSignature(w, r) {
		return
	}
	id := r.PathValue("id")
	if problem := spec.CheckID(id); problem != "" {
		badParam(w, "id", problem)
		return
	}
	q := r.URL.Query()
	stream := q.Get("stream")
	if stream == "" {
		stream = "stdout"
	}
	if stream != "stdout" && stream != "stderr" {
		badParam(w, "stream", "must be stdout or stderr, got "+strconv.Quote(stream))
		return
	}
	var offset int64
	if s := q.Get("offset"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			badParam(w, "offset", "must be a non-negative integer, got "+strconv.Quote(s))
			return
		}
		offset = v
	}
	var follow bool
	switch s := q.Get("follow"); s {
	case "", "false":
	case "true":
		follow = true
	default:
		badParam(w, "follow", "must be true or false, got "+strconv.Quote(s))
		return
	}
	a.mu.Lock()
	ar := a.allocs[id]
	a.mu.Unlock()
	if ar == nil {
		writeError(w, http.StatusNotFound, "unknown allocation "+strconv.Quote(id))
		return
	}
	name := q.Get("task")
	if name == "" && len(ar.tasks) == 1 {
		name = ar.tasks[0].cfg.Name
	}
	tr := ar.task(name)
	if tr == nil {
		writeError(w, http.StatusNotFound, "allocation "+id+" has no task "+strconv.Quote(name))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush() // the client sees the stream open before the first line
	// The stream flushes every chunk and lasts as long as the client
	// reads; the write timeout bounds only a client that stopped reading.
	out := httplimit.Stream(w, a.cfg.HTTP.WithDefaults().WriteTimeout)
	opts := logs.StreamOptions{Offset: offset, Follow: follow, Done: tr.dead}
	if err := logs.Stream(r.Context(), out, tr.cfg.TaskDir, stream, opts); err != nil && r.Context().Err() == nil {
		a.log.Warn("log stream ended with an error", "alloc", id, "task", name, "err", err)
	}
}
