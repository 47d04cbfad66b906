// Package faultnet is the fault-injection harness of Strata's tests: a
// small network of hosts, each a Linux network namespace with one address
// on a private bridge, in which tests run real processes and then break
// things: SIGKILL, SIGSTOP/SIGCONT, links cut one way or both, lossy links,
// interfaces down.
//
//	n := faultnet.New(t)                 // skips unless root with ip, nft, nsenter
//	s1, s2 := n.AddHost("s1"), n.AddHost("s2")
//	p := s1.Start("server", bin, "server", "--http-addr", s1.Addr(4680))
//	n.Cut(s1, s2)                        // nft drop rules in both hosts
//	p.Pause(); p.Resume(); p.Kill(); p.Restart()
//	n.HealAll()
//	faultnet.Eventually(t, 10*time.Second, "a leader", func() error { ... })
//
// The bridge lives in a namespace of its own, so nothing is added to the
// machine's own network: no interface, address, route or firewall rule.
// The test process reaches the hosts through Host.DialContext (a socket
// opened inside the host's namespace), so a test sends traffic only to
// namespaces it made. Every namespace is named with a prefix holding the
// test process's pid ("stfault<pid>-<n>-"), removed in t.Cleanup whether
// the test passed or not; namespaces left by a test process that died are
// removed by the next New.
//
// Cuts are nftables drop rules in the sending host's output hook (one
// table per host, replaced atomically on every change), so a cut
// connection hangs as it would across a real partition, and heals without
// being reset. Loss uses `numgen random`. There is no delay: the kernel
// here has no netem, and a delaying proxy is not built.
//
// Process logs and anything a test writes to Net.Dir are kept when the
// test fails (the path is logged) and removed when it passes.
package faultnet
