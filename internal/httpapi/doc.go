// Package httpapi is the cell's HTTP+JSON API (/v1): the table of routes,
// the one wrapper every route goes through, reading requests, and writing
// answers as each reader may see them.
//
// # What it owns
//
//   - The route table (routes.go): pattern, ACL rule, where a route is
//     served (route.Local or by the leader), how its writes are audited,
//     which path parameter names a node or a namespace, and a handler that
//     returns its error. New mounts the table with the groups of other
//     rooms (the replica's status and operator routes) and refuses a
//     route without a rule or a pattern twice.
//   - The wrapper (serve.go): readiness and the leader (the replica's
//     Gate), request metrics, the caller, the audit log (audit.go), and
//     the rule: ACLs (acl.go) or a node's own credentials
//     (node_identity.go). A handler never checks who calls.
//   - Reading requests: bodies, path and query parameters (route), and
//     the checks of what agents send (validate*.go) and of documents
//     (internal/spec). Every problem is a 400 naming its field.
//   - Answers: route.Error and Fail; what each reader may see of an
//     object (views.go: secrets opened for their node's agent only,
//     migration tokens hidden from users); workload status summaries
//     (workload_status.go).
//   - Sealing workload secrets before they enter the log (secrets.go).
//
// # How a request flows
//
// A handler reads and checks its request, reads the state it needs from
// an MVCC snapshot, builds a command (the evaluations a change causes come
// from internal/trigger), and proposes it (fsm.Proposer). The answer
// carries the index the command committed at. A read blocks on ?index
// (blocking.go) until the state moves past it.
//
// # What it must never do
//
//   - Write state other than by proposing a command; decide a placement
//     (the scheduler does, on the leader); decide which evaluations a
//     change causes (internal/trigger does).
//   - Check credentials in a handler: a route's rule says what it needs,
//     and the wrapper applies it before the handler runs.
//   - Answer from this server's state a request the leader must serve:
//     the replica's Gate routes it.
//   - Send a secret's value or ciphertext, or a migration's token, to
//     anyone but the node's own agent.
package httpapi
