// Package httplimit is how Strata's HTTP servers (the control plane's API
// and each agent's) protect themselves from slow, idle and greedy clients:
// read-header, read, write and idle timeouts on every connection, per-route
// deadlines for the requests that legitimately last long (blocking queries,
// log streams), and caps on connections per client address and in total,
// answered with a clear 429 or 503 instead of a silent hang.
//
// Without it, 1,100 clients that connected and sent nothing exhausted a
// server's 1,024 file descriptors and the CLI timed out (issue 7, defect
// 8). With it, a client's connections beyond its cap are answered and
// closed at once, the total stays below the process's descriptor limit, and
// a connection that stalls is closed after its timeout.
//
//	srv := httplimit.NewServer(handler, cfg)         // timeouts set
//	srv.Serve(httplimit.Listen(ln, cfg, logger))     // caps enforced
//	httplimit.Extend(w, wait+cfg.WriteTimeout)       // in a long-poll handler
//	out := httplimit.Stream(w, cfg.WriteTimeout)     // in a streaming handler
//
// The package knows nothing of Strata's routes or types; docs/limits.md
// lists the defaults and the flags that set them.
package httplimit
