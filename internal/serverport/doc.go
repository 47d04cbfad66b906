// Package serverport is the one TCP port Strata servers talk to each other
// on (--raft-addr). Raft's replication and the servers' own HTTP (join,
// requests a follower forwards to the leader) share it: the first byte of
// every connection says which protocol follows, the way Nomad's and
// Consul's server RPC ports do.
//
// A Port hands raft a raft.StreamLayer and the servers' HTTP a
// net.Listener, and dials peers for both. Connections can be wrapped after
// the kind byte (Options.WrapServer/WrapClient): that is where TLS between
// servers plugs in, for every protocol on the port at once.
//
// It knows nothing of raft's messages or of HTTP routes, and never reads
// past the kind byte of a connection it hands on. A person's client given
// this port for the API by mistake (an HTTP request, a TLS handshake) gets
// a plain HTTP 400 that names --http-addr, rather than a reset it would
// retry as a network error.
package serverport
