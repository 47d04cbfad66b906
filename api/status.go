package api

// Workload statuses as `strata status` shows them.
const (
	WorkloadPending = "pending" // nothing runs yet
	WorkloadRunning = "running" // every wanted instance runs
	WorkloadPartial = "partial" // some instances run, some are pending or failed
	WorkloadStopped = "stopped"
	WorkloadDead    = "dead" // every instance finished or failed
)

// WorkloadStatus is the answer to GET /v1/workloads/{name}.
type WorkloadStatus struct {
	Workload *Workload     `json:"workload"`
	Status   string        `json:"status"`
	Groups   []GroupStatus `json:"groups"`
	// LatestEval is the newest evaluation of the workload.
	LatestEval *Evaluation `json:"latestEval,omitempty"`
	// NextEval is the earliest follow-up evaluation waiting for its time
	// (a delayed replacement, the end of an unknown allocation's grace).
	NextEval   *Evaluation `json:"nextEval,omitempty"`
	Unenforced []Notice    `json:"unenforced,omitempty"`
}

// GroupStatus counts a group's allocations by client status.
type GroupStatus struct {
	Name     string `json:"name"`
	Desired  int    `json:"desired"`
	Pending  int    `json:"pending"`
	Running  int    `json:"running"`
	Complete int    `json:"complete"`
	Failed   int    `json:"failed"`
	Lost     int    `json:"lost"`
	// Preempted counts allocations evicted by higher-priority work.
	Preempted int `json:"preempted"`
	// Dead counts replicas that failed and will not be replaced, and
	// DeadReason says why (the reschedule policy's verdict, e.g.
	// "reschedule attempts exhausted: 3 in 1h"). They count in Failed too.
	Dead       int    `json:"dead,omitempty"`
	DeadReason string `json:"deadReason,omitempty"`
	// Failure says why instances are not placed, when some are not.
	Failure *GroupFailure `json:"failure,omitempty"`
	// Explanation is what the newest evaluation that tried to place some
	// of the group saw: nodes examined, what each filter rejected, and the
	// chosen node's score components. ExplainedBy names that evaluation.
	Explanation *Explanation `json:"explanation,omitempty"`
	ExplainedBy string       `json:"explainedBy,omitempty"`
}

// WorkloadSummary is one row of GET /v1/workloads.
type WorkloadSummary struct {
	Name          string `json:"name"`
	Status        string `json:"status"`
	PriorityClass string `json:"priorityClass"`
	Priority      int    `json:"priority"`
	Version       uint64 `json:"version"`
	Desired       int    `json:"desired"`
	Running       int    `json:"running"`
	Pending       int    `json:"pending"`
	Failed        int    `json:"failed"`
}

// RegisterResponse answers POST /v1/workloads.
type RegisterResponse struct {
	Name       string   `json:"name"`
	Version    uint64   `json:"version"`
	EvalID     string   `json:"evalId"`
	Index      uint64   `json:"index"`
	Unenforced []Notice `json:"unenforced,omitempty"`
}

// StopResponse answers DELETE /v1/workloads/{name}.
type StopResponse struct {
	EvalID string `json:"evalId"`
	Index  uint64 `json:"index"`
}

// FieldError names one bad field of a request.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// ErrorResponse is the JSON body of every non-2xx answer.
type ErrorResponse struct {
	Error  string       `json:"error"`
	Fields []FieldError `json:"fields,omitempty"`
	// Code is a stable machine-readable tag, e.g. "node-unknown", "not-found".
	Code string `json:"code,omitempty"`
}
