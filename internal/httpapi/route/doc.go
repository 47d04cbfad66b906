// Package route is the vocabulary every room that serves HTTP shares: a
// Route (pattern, ACL rule, where it is served, how it is audited, and a
// handler that returns an error), the API's error answers (Error and
// Fail, one JSON shape with a stable code), and the one way a request is
// read (bodies through strictjson, path parameters through spec's checks,
// query parameters through Query).
//
// The HTTP API (internal/httpapi) builds its table of routes from groups
// — its own, the replica's status and operator routes, a web UI's later —
// and applies one wrapper to each (rule, gating, audit, metrics).
//
// # What it must never do
//
//   - Hold a domain decision: it knows how to answer, not what. Errors of
//     other rooms become answers only through Error or Reply.
//   - Import a room (fsm, replica, leader, httpapi): they import it.
package route
