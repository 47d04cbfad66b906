package httpapi

import (
	"net/http"

	"github.com/strata-dev/strata/internal/httpapi/route"
)

// routes is the API's table: every endpoint, one line each, with what a
// caller needs while ACLs are on (route.Rule), where it is served, and
// how it is audited. New adds the groups of other rooms (the replica's
// status and operator routes) and mounts them all through one wrapper
// (serve.go): the rule, readiness and the leader (replica.Gate), the
// audit log and the request metrics are properties of a line here, never
// code in a handler.
//
// Adding an endpoint is one line here plus its handler, a method
// func(w, r) error that returns its error instead of writing it:
//
//	{Pattern: "GET /v1/things/{name}", Rule: route.NamespaceRead, Handle: s.handleThing},
//
// A rule is required (TestEveryRouteHasARule); a route a node calls with
// its own credentials takes route.ByNode and, when a path parameter names
// the node, NodeParam. A group of routes of another room (a web UI) is
// passed to New.
func (s *API) routes() route.Group {
	followedLog := func(r *http.Request) bool { return r.URL.Query().Get("follow") == "true" }
	return route.Group{
		// Workloads and their history (docs/workload-spec.md, docs/deployments.md).
		{Pattern: "POST /v1/workloads", Rule: route.NamespaceSubmit, Handle: s.handleRegisterWorkload},
		{Pattern: "PUT /v1/workloads", Rule: route.NamespaceSubmit, Handle: s.handleRegisterWorkload},
		{Pattern: "GET /v1/workloads", Rule: route.NamespaceRead, Handle: s.handleListWorkloads},
		{Pattern: "POST /v1/workloads/plan", Rule: route.NamespaceSubmit, Handle: s.handlePlanWorkload},
		{Pattern: "GET /v1/workloads/{name}", Rule: route.NamespaceRead, Handle: s.handleWorkloadStatus},
		{Pattern: "DELETE /v1/workloads/{name}", Rule: route.NamespaceSubmit, Handle: s.handleStopWorkload},
		{Pattern: "GET /v1/workloads/{name}/allocations", Rule: route.NamespaceRead, Handle: s.handleWorkloadAllocs},
		{Pattern: "GET /v1/workloads/{name}/evaluations", Rule: route.NamespaceRead, Handle: s.handleWorkloadEvals},
		{Pattern: "GET /v1/workloads/{name}/versions", Rule: route.NamespaceRead, Handle: s.handleWorkloadVersions},
		{Pattern: "POST /v1/workloads/{name}/revert", Rule: route.NamespaceSubmit, Handle: s.handleRevertWorkload},
		{Pattern: "GET /v1/workloads/{name}/deployments", Rule: route.NamespaceRead, Handle: s.handleWorkloadDeployments},
		{Pattern: "GET /v1/deployments", Rule: route.NamespaceRead, Handle: s.handleListDeployments},
		{Pattern: "GET /v1/deployments/{id}", Rule: route.NamespaceRead, Handle: s.handleGetDeployment},
		{Pattern: "POST /v1/deployments/{id}/promote", Rule: route.NamespaceSubmit, Handle: s.handlePromoteDeployment},
		{Pattern: "POST /v1/deployments/{id}/fail", Rule: route.NamespaceSubmit, Handle: s.handleFailDeployment},

		// Allocations, evaluations, events, services.
		{Pattern: "GET /v1/allocations", Rule: route.NamespaceRead, Handle: s.handleListAllocs},
		{Pattern: "GET /v1/allocations/{id}", Rule: route.NamespaceRead, Handle: s.handleGetAlloc},
		{Pattern: "GET /v1/allocations/{id}/logs", Rule: route.NamespaceLogs, Stream: followedLog, Handle: s.handleAllocLogs},
		{Pattern: "POST /v1/allocations/{id}/migrate", Rule: route.NamespaceSubmit, Handle: s.handleMigrateAlloc},
		{Pattern: "GET /v1/evaluations", Rule: route.NamespaceRead, Handle: s.handleListEvals},
		{Pattern: "GET /v1/evaluations/{id}", Rule: route.NamespaceRead, Handle: s.handleGetEval},
		{Pattern: "POST /v1/evaluations/{id}/retry", Rule: route.NamespaceSubmit, Handle: s.handleRetryEval},
		{Pattern: "GET /v1/events", Rule: route.NamespaceRead, Handle: s.handleListEvents},
		// Incidents: the cell's trouble correlated by the leader; they
		// span namespaces, so reading them is the cell's (docs/incidents.md).
		{Pattern: "GET /v1/incidents", Rule: route.CellRead, Handle: s.handleListIncidents},
		{Pattern: "GET /v1/incidents/{id}", Rule: route.CellRead, Handle: s.handleGetIncident},
		{Pattern: "GET /v1/services", Rule: route.NamespaceRead, Handle: s.handleListServices},
		{Pattern: "GET /v1/services/{name}", Rule: route.NamespaceRead, Handle: s.handleService},

		// Nodes and their operations (docs/nodes.md): the cell's.
		{Pattern: "GET /v1/nodes", Rule: route.CellRead, Handle: s.handleListNodes},
		{Pattern: "GET /v1/nodes/{id}", Rule: route.CellRead, Handle: s.handleGetNode},
		{Pattern: "GET /v1/nodes/{id}/status", Rule: route.CellRead, Handle: s.handleNodeStatus},
		{Pattern: "POST /v1/nodes/{id}/eligibility", Rule: route.CellManage, Handle: s.handleNodeEligibility},
		{Pattern: "POST /v1/nodes/{id}/drain", Rule: route.CellManage, Handle: s.handleNodeDrain},
		{Pattern: "POST /v1/nodes/{id}/quarantine", Rule: route.CellManage, Handle: s.handleNodeQuarantine},
		{Pattern: "POST /v1/nodes/{id}/purge", Rule: route.CellManage, Handle: s.handleNodePurge},

		// The cell's configuration and its tenants (docs/tenants.md):
		// reading one's own namespace is a read in it (the path names it);
		// listing them all, and changing them, are the cell's.
		{Pattern: "GET /v1/cell/config", Rule: route.CellRead, Handle: s.handleGetCellConfig},
		{Pattern: "PUT /v1/cell/config", Rule: route.CellManage, Handle: s.handleSetCellConfig},
		{Pattern: "GET /v1/namespaces", Rule: route.CellRead, Handle: s.handleListNamespaces},
		{Pattern: "GET /v1/namespaces/{name}", Rule: route.NamespaceRead, NamespaceParam: "name", Handle: s.handleGetNamespace},
		{Pattern: "PUT /v1/namespaces", Rule: route.CellManage, Handle: s.handleApplyNamespace},
		{Pattern: "DELETE /v1/namespaces/{name}", Rule: route.CellManage, Handle: s.handleDeleteNamespace},

		// ACLs and the audit log (docs/security.md).
		{Pattern: "POST /v1/acl/bootstrap", Rule: route.Open, Handle: s.handleACLBootstrap}, // once per cell
		{Pattern: "GET /v1/acl/token/self", Rule: route.AnyToken, Handle: s.handleACLTokenSelf},
		{Pattern: "GET /v1/acl/policies", Rule: route.ACLAdmin, Handle: s.handleListACLPolicies},
		{Pattern: "GET /v1/acl/policies/{name}", Rule: route.ACLAdmin, Handle: s.handleGetACLPolicy},
		{Pattern: "PUT /v1/acl/policies", Rule: route.ACLAdmin, Handle: s.handleApplyACLPolicy},
		{Pattern: "DELETE /v1/acl/policies/{name}", Rule: route.ACLAdmin, Handle: s.handleDeleteACLPolicy},
		{Pattern: "GET /v1/acl/tokens", Rule: route.ACLAdmin, Handle: s.handleListACLTokens},
		{Pattern: "GET /v1/acl/tokens/{accessor}", Rule: route.ACLAdmin, Handle: s.handleGetACLToken},
		{Pattern: "POST /v1/acl/tokens", Rule: route.ACLAdmin, Handle: s.handleCreateACLToken},
		{Pattern: "DELETE /v1/acl/tokens/{accessor}", Rule: route.ACLAdmin, Handle: s.handleRevokeACLToken},
		{Pattern: "GET /v1/audit", Rule: route.ACLAdmin, Handle: s.handleAudit},

		// The agents' own, each with the node's credentials (checked by the
		// wrapper). Heartbeats are their routine and never audited; their
		// reports only when refused.
		{Pattern: "POST /v1/agent/nodes", Rule: route.NodeJoin, Handle: s.handleRegisterNode},
		{Pattern: "PUT /v1/agent/nodes/{id}/heartbeat", Rule: route.ByNode, NodeParam: "id", Audit: route.AuditNever, Handle: s.handleHeartbeat},
		{Pattern: "GET /v1/agent/nodes/{id}/allocations", Rule: route.ByNode, NodeParam: "id", Handle: s.handleNodeAllocs},
		{Pattern: "POST /v1/agent/allocations", Rule: route.ByNode, Audit: route.AuditRefusals, Handle: s.handleAllocUpdates},
		// A migration's agents: the handlers check that the node is the
		// migration's source or target.
		{Pattern: "POST /v1/agent/allocations/{id}/migration", Rule: route.ByNode, Handle: s.handleMigrationOutcome},
		{Pattern: "GET /v1/agent/nodes/{id}/incoming/{alloc}", Rule: route.ByNode, NodeParam: "id", Handle: s.handleIncomingMigration},

		// Served ahead of the readiness gate: a server that is not ready
		// yet is what an operator wants to watch. A scrape sends its token
		// as "Authorization: Bearer", as Prometheus does.
		{Pattern: "GET /metrics", Rule: route.CellRead, Local: true, Scrape: true, Handle: s.handleMetrics},
		// The 404 of unknown paths.
		{Pattern: "/", Rule: route.Open, Handle: handleNoRoute},
	}
}
