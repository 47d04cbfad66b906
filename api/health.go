package api

import "time"

// Check types.
const (
	CheckHTTP = "http" // GET on a port of the allocation: 2xx or 3xx passes
	CheckTCP  = "tcp"  // a TCP connection to a port of the allocation is accepted
	CheckExec = "exec" // a command exits 0
)

// Check purposes.
const (
	// CheckReadiness gates the allocation's health: the service registry,
	// `strata run --wait` and deployments count only healthy allocations.
	CheckReadiness = "readiness"
	// CheckLiveness restarts the task, through its restart policy, once
	// the check fails FailureThreshold times in a row.
	CheckLiveness = "liveness"
)

// Check is one health check of a task (Task.Checks) or a service
// (Service.Checks). internal/spec validates and defaults it.
type Check struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`              // http, tcp, exec
	Purpose string   `json:"purpose"`           // readiness (default) or liveness
	Port    string   `json:"port,omitempty"`    // a port name of the group (http, tcp)
	Path    string   `json:"path,omitempty"`    // http: the request path, "/" by default
	Command []string `json:"command,omitempty"` // exec: the program and its arguments

	Interval         time.Duration `json:"interval"`         // between two runs
	Timeout          time.Duration `json:"timeout"`          // one run; at most Interval
	InitialDelay     time.Duration `json:"initialDelay"`     // after the task starts, before the first run
	SuccessThreshold int           `json:"successThreshold"` // passes in a row that make it passing
	FailureThreshold int           `json:"failureThreshold"` // failures in a row that make it failing
}

// PortRequest is a port a group asks of its node. With Static 0 the
// scheduler draws a free port of the node's dynamic range (DynamicPortMin
// to DynamicPortMax); otherwise exactly Static, which no other allocation
// of the node may hold.
type PortRequest struct {
	Name   string `json:"name"`
	Static int    `json:"static,omitempty"`
}

// The range dynamic ports are drawn from, on every node. It lies below
// Linux's default ephemeral range (32768-60999), so that a port the
// scheduler hands out is not already a client socket's.
const (
	DynamicPortMin = 20000
	DynamicPortMax = 32000
)

// DefaultShutdownDelay is a group's ShutdownDelay when it offers a
// service and does not say: longer than a watching client takes to see a
// new list of endpoints, short enough not to slow a rollout.
const DefaultShutdownDelay = 2 * time.Second

// AssignedPort is a port an allocation holds on its node.
type AssignedPort struct {
	Name string `json:"name"`
	Port int    `json:"port"`
}

// Service is an endpoint the group offers on one of its ports. The
// registry (GET /v1/services/{name}) lists it for each healthy allocation.
type Service struct {
	Name   string            `json:"name"`
	Port   string            `json:"port"` // a port name of the group
	Tags   []string          `json:"tags,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// Checks are readiness checks of this service; they count toward the
	// allocation's health like the tasks' readiness checks.
	Checks []Check `json:"checks,omitempty"`
}

// Allocation health statuses (AllocHealth.Status).
const (
	HealthPending   = "pending"   // tasks starting, or readiness checks not yet passed
	HealthHealthy   = "healthy"   // every task runs and every readiness check passes
	HealthUnhealthy = "unhealthy" // a check fails, or a task is down
)

// Check statuses (CheckResult.Status).
const (
	CheckPending = "pending" // not yet run enough times to say
	CheckPassing = "passing"
	CheckFailing = "failing"
)

// AllocHealth is the agent's view of an allocation's health, reported
// with its status. Allocation.Healthy is the one question the rest of the
// cell asks of it.
type AllocHealth struct {
	Status string    `json:"status"`           // pending, healthy, unhealthy
	Reason string    `json:"reason,omitempty"` // why it is not healthy
	Since  time.Time `json:"since"`            // when Status last changed (agent clock)
	// Checks holds each check's last result, tasks' checks in task
	// order, then services' checks.
	Checks []CheckResult `json:"checks,omitempty"`
}

// CheckResult is the last result of one check.
type CheckResult struct {
	Name    string `json:"name"`
	Task    string `json:"task,omitempty"`    // the task it belongs to
	Service string `json:"service,omitempty"` // or the service
	Type    string `json:"type"`
	Purpose string `json:"purpose"`
	Status  string `json:"status"` // pending, passing, failing
	// Output is what the last run said: "HTTP 200", "connection
	// refused", an exec command's first output bytes.
	Output string    `json:"output,omitempty"`
	Since  time.Time `json:"since"` // when Status last changed (agent clock)
	// Failures counts failures in a row (0 after a pass).
	Failures int `json:"failures,omitempty"`
}

// Healthy reports whether the allocation should take traffic and counts
// toward a healthy replica: it is wanted, its tasks run, and the agent
// reported it healthy (every readiness check passes; without readiness
// checks, every task runs). This is the one definition the service
// registry, `strata run --wait` and deployments use.
func (a *Allocation) Healthy() bool {
	return a.DesiredStatus == DesiredRun && a.ClientStatus == AllocRunning &&
		a.Health != nil && a.Health.Status == HealthHealthy
}

// Port returns the port the allocation holds under name, or 0.
func (a *Allocation) Port(name string) int {
	for _, p := range a.Assignment.Ports {
		if p.Name == name {
			return p.Port
		}
	}
	return 0
}

// ServiceEndpoint is one healthy allocation offering a service, as the
// registry lists it.
type ServiceEndpoint struct {
	Service  string            `json:"service"`
	Address  string            `json:"address"` // the node's host, from its advertised HTTP address
	Port     int               `json:"port"`
	AllocID  string            `json:"allocId"`
	Workload string            `json:"workload"`
	Group    string            `json:"group"`
	NodeID   string            `json:"nodeId"`
	NodeName string            `json:"nodeName,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// ServiceSummary is one row of GET /v1/services.
type ServiceSummary struct {
	Name      string   `json:"name"`
	Healthy   int      `json:"healthy"`   // endpoints listed
	Instances int      `json:"instances"` // allocations that offer it and are wanted
	Workloads []string `json:"workloads"`
}
