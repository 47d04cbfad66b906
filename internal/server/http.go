package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// maxBodyBytes bounds every request body; larger bodies get 413.
const maxBodyBytes = 4 << 20

// maxWait caps a blocking query's wait.
const maxWait = 5 * time.Minute

// errStoreReplaced ends a blocking query whose store a snapshot restore
// replaced; the query is asked again of the new store.
var errStoreReplaced = errors.New("state store replaced")

// indexHeader carries the state index of a response, for blocking queries.
const indexHeader = "X-Strata-Index"

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/workloads", s.handleRegisterWorkload)
	mux.HandleFunc("PUT /v1/workloads", s.handleRegisterWorkload)
	mux.HandleFunc("GET /v1/workloads", s.handleListWorkloads)
	mux.HandleFunc("GET /v1/workloads/{name}", s.handleWorkloadStatus)
	mux.HandleFunc("DELETE /v1/workloads/{name}", s.handleStopWorkload)
	mux.HandleFunc("GET /v1/workloads/{name}/allocations", s.handleWorkloadAllocs)
	mux.HandleFunc("GET /v1/workloads/{name}/evaluations", s.handleWorkloadEvals)
	s.deploymentRoutes(mux) // endpoints_deployments.go

	mux.HandleFunc("GET /v1/nodes", s.handleListNodes)
	mux.HandleFunc("GET /v1/nodes/{id}", s.handleGetNode)
	mux.HandleFunc("GET /v1/nodes/{id}/status", s.handleNodeStatus)
	mux.HandleFunc("POST /v1/nodes/{id}/eligibility", s.handleNodeEligibility)
	mux.HandleFunc("POST /v1/nodes/{id}/drain", s.handleNodeDrain)
	mux.HandleFunc("POST /v1/nodes/{id}/quarantine", s.handleNodeQuarantine)
	mux.HandleFunc("POST /v1/nodes/{id}/purge", s.handleNodePurge)
	mux.HandleFunc("GET /v1/allocations", s.handleListAllocs)
	mux.HandleFunc("GET /v1/allocations/{id}", s.handleGetAlloc)
	mux.HandleFunc("GET /v1/allocations/{id}/logs", s.handleAllocLogs)
	mux.HandleFunc("POST /v1/allocations/{id}/migrate", s.handleMigrateAlloc)
	mux.HandleFunc("GET /v1/evaluations", s.handleListEvals)
	mux.HandleFunc("GET /v1/evaluations/{id}", s.handleGetEval)
	mux.HandleFunc("GET /v1/events", s.handleListEvents)
	mux.HandleFunc("GET /v1/services", s.handleListServices)
	mux.HandleFunc("GET /v1/services/{name}", s.handleService)
	mux.HandleFunc("GET /v1/status/leader", s.handleLeader)
	mux.HandleFunc("GET /v1/status/ready", s.handleReady)
	// This server's own view of the raft configuration, served even before
	// it is ready or when the cell has no leader (a lost quorum).
	mux.HandleFunc("GET /v1/status/raft", s.handleRaftConfiguration)
	mux.HandleFunc("GET /v1/cell/config", s.handleGetCellConfig)
	mux.HandleFunc("PUT /v1/cell/config", s.handleSetCellConfig)

	mux.HandleFunc("GET /v1/operator/raft/configuration", s.handleRaftConfiguration)
	mux.HandleFunc("DELETE /v1/operator/raft/peer", s.handleRemovePeer)
	mux.HandleFunc("GET /v1/operator/snapshot", s.handleSnapshotSave)
	mux.HandleFunc("PUT /v1/operator/snapshot", s.handleSnapshotRestore)

	// The agents' own endpoints.
	mux.HandleFunc("POST /v1/agent/nodes", s.handleRegisterNode)
	mux.HandleFunc("PUT /v1/agent/nodes/{id}/heartbeat", s.handleHeartbeat)
	mux.HandleFunc("GET /v1/agent/nodes/{id}/allocations", s.handleNodeAllocs)
	mux.HandleFunc("POST /v1/agent/allocations", s.handleAllocUpdates)
	mux.HandleFunc("POST /v1/agent/allocations/{id}/migration", s.handleMigrationOutcome)
	mux.HandleFunc("GET /v1/agent/nodes/{id}/incoming/{alloc}", s.handleIncomingMigration)

	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not-found", fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	s.aclRoutes(mux)
	s.namespaceRoutes(mux)
	return s.withMetricsEndpoint(s.gate(s.metrics.instrument(mux, s.authorize(mux))))
}

// peerRoutes is the handler of the server port's HTTP: the servers'
// formation calls, and the whole API for requests followers forward.
func (s *Server) peerRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/internal/hello", s.handleHello)
	mux.HandleFunc("POST /v1/internal/join", s.handleJoin)
	mux.Handle("/", viaServerPort(s.routes()))
	return mux
}

// httpError is an error with an HTTP status and a stable code.
type httpError struct {
	status int
	code   string
	msg    string
	fields []api.FieldError
}

func (e *httpError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &httpError{status: http.StatusNotFound, code: "not-found", msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, code: "bad-request", msg: fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	// A value made for machines (a long list in columns) is not indented.
	if _, compact := v.(interface{ CompactJSON() }); !compact {
		enc.SetIndent("", "  ")
	}
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set(errorCodeHdr, code) // for the audit log
	writeJSON(w, status, &api.ErrorResponse{Error: msg, Code: code})
}

// fail writes err as a JSON error, choosing the status from its type.
func (s *Server) fail(w http.ResponseWriter, err error) {
	var he *httpError
	switch {
	case errors.As(err, &he):
		w.Header().Set(errorCodeHdr, he.code) // for the audit log
		writeJSON(w, he.status, &api.ErrorResponse{Error: he.msg, Code: he.code, Fields: he.fields})
	case errors.Is(err, ErrOutcomeUnknown):
		s.logger.Warn("write outcome unknown", "err", err)
		writeError(w, http.StatusServiceUnavailable, "outcome-unknown", err.Error()+"; read the state before retrying")
	case errors.Is(err, errNotReady):
		writeNotReady(w, err)
	case errors.Is(err, ErrNoQuorum):
		writeError(w, http.StatusServiceUnavailable, api.CodeNoQuorum, err.Error())
	case errors.Is(err, ErrNotLeader):
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
		writeError(w, http.StatusServiceUnavailable, "not-leader", err.Error()+"; retry")
	default:
		s.logger.Error("request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
	}
}

// readBody reads a size-limited request body; too large gives 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &httpError{status: http.StatusRequestEntityTooLarge, code: "too-large",
				msg: fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes)}
		}
		return nil, badRequest("read body: %v", err)
	}
	return body, nil
}

// blockingParams reads ?index=N&wait=D.
func blockingParams(r *http.Request) (uint64, time.Duration, error) {
	q := newQuery(r)
	index := q.uint("index")
	wait, given := q.duration("wait")
	if err := q.err(); err != nil {
		return 0, 0, err
	}
	if !given && index > 0 {
		wait = 30 * time.Second
	}
	return index, min(wait, maxWait), nil
}

// serveBlocking answers a read, blocking per ?index&wait. read returns the
// value and the index of the data it read, adding watches to ws.
func (s *Server) serveBlocking(w http.ResponseWriter, r *http.Request, read func(snap *state.Snapshot, ws watchSet) (any, uint64, error)) {
	index, wait, err := blockingParams(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	if wait > 0 {
		s.cfg.HTTP.ExtendBy(w, wait) // the server's timeouts would cut the wait short
	}
	var out any
	var idx uint64
	for {
		replaced := s.fsm.Replaced()
		idx, err = s.State().Query(r.Context(), index, wait, func(snap *state.Snapshot, ws watchSet) (uint64, error) {
			select {
			case <-replaced:
				return 0, errStoreReplaced
			default:
			}
			ws.Add(replaced)
			v, i, err := read(snap, ws)
			out = v
			return i, err
		})
		if !errors.Is(err, errStoreReplaced) {
			break
		}
		// A snapshot restore swapped the store: ask the new one.
	}
	if err != nil {
		if lostLeadership(r.Context()) {
			s.fail(w, ErrNotLeader)
			return
		}
		if r.Context().Err() != nil {
			return // the client went away
		}
		s.fail(w, err)
		return
	}
	if out, err = s.publicView(out); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set(indexHeader, strconv.FormatUint(max(idx, 1), 10))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleLeader(w http.ResponseWriter, r *http.Request) {
	addr, id := s.raft.raft.LeaderWithID()
	writeJSON(w, http.StatusOK, map[string]any{"leader": string(addr), "leaderId": string(id), "self": s.id,
		"selfAddress": string(s.raft.addr()), "isLeader": s.IsLeader()})
}

// handleReady says whether this server serves from its state: 200 when it
// does, 503 not-ready with the reason while it replays (a health check for
// load balancers and test harnesses).
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if err := s.ready.local(); err != nil {
		writeNotReady(w, err)
		return
	}
	_, id := s.raft.raft.LeaderWithID()
	writeJSON(w, http.StatusOK, map[string]any{"ready": true, "isLeader": s.IsLeader(), "leaderId": string(id),
		"appliedIndex": s.fsm.AppliedIndex()})
}
