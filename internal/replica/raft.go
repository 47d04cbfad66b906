package replica

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/strata-dev/strata/internal/serverport"
)

// raftNode bundles raft with the stores and the port it owns so they close
// together.
type raftNode struct {
	raft     *raft.Raft
	logStore *raftboltdb.BoltStore
	snaps    raft.SnapshotStore
	// port is the server port raft and the servers' HTTP share; nil for the
	// in-memory transport of a lone server.
	port *serverport.Port
	// observer learns leaders' commit indexes (TCP transport only).
	observer  *commitObserver
	transport raft.Transport
	// closed is closed once raft has shut down.
	closed chan struct{}
}

// raftOptions say how to open raft; see Config for their meaning.
type raftOptions struct {
	dataDir, serverID string
	bindAddr          string // empty: a lone voter over an in-memory transport
	advertise         string
	multiplier        int
	// bootstrapAlone makes a server with no state the only voter of a new
	// cell (a single server, or --bootstrap-expect 1).
	bootstrapAlone bool
	logger         *slog.Logger
	// peerTLS and dialTLS, when set, make the server port mutual TLS
	// (tls.go).
	peerTLS, dialTLS *tls.Config
}

// Raft's timeouts for a cell of several servers, before the multiplier. A
// follower that hears nothing for HeartbeatTimeout (randomised up to twice
// that) starts an election; a leader that cannot reach a quorum for
// LeaderLeaseTimeout steps down. docs/architecture.md says why these
// values; docs/benchmarks.md measures the failover they give.
const (
	baseHeartbeatTimeout   = 500 * time.Millisecond
	baseElectionTimeout    = 500 * time.Millisecond
	baseLeaderLeaseTimeout = 400 * time.Millisecond
)

func raftConfig(o raftOptions) *raft.Config {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(o.serverID)
	conf.BatchApplyCh = true
	conf.MaxAppendEntries = 512
	conf.SnapshotThreshold = 8192
	conf.SnapshotInterval = 30 * time.Second
	// A server removed from the cell stays up without a vote (and rejoins
	// when restarted with --join) instead of shutting raft down under a
	// running server.
	conf.ShutdownOnRemove = false
	conf.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})
	if o.bindAddr == "" {
		// A lone voter: elect itself quickly.
		conf.HeartbeatTimeout = 200 * time.Millisecond
		conf.ElectionTimeout = 200 * time.Millisecond
		conf.LeaderLeaseTimeout = 100 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
		return conf
	}
	m := time.Duration(max(o.multiplier, 1))
	conf.HeartbeatTimeout = m * baseHeartbeatTimeout
	conf.ElectionTimeout = m * baseElectionTimeout
	conf.LeaderLeaseTimeout = m * baseLeaderLeaseTimeout
	conf.CommitTimeout = 20 * time.Millisecond
	return conf
}

// openRaft opens raft in dataDir. A lone server without --raft-addr uses
// an in-memory transport: it needs no port, and its address stays stable
// across restarts. Several servers share a server port (serverport) for
// raft and their own HTTP; forming the cell is formCell's job, not this.
func openRaft(o raftOptions, f raft.FSM) (*raftNode, error) {
	raftDir := filepath.Join(o.dataDir, "raft")
	if err := os.MkdirAll(raftDir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft dir: %w", err)
	}
	conf := raftConfig(o)
	logStore, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(raftDir, "raft.db")})
	if err != nil {
		return nil, fmt.Errorf("open raft log %s: %w", raftDir, err)
	}
	n := &raftNode{logStore: logStore, closed: make(chan struct{})}
	fail := func(err error) (*raftNode, error) {
		if n.transport != nil {
			if c, ok := n.transport.(raft.WithClose); ok {
				c.Close()
			}
		}
		if n.port != nil {
			n.port.Close()
		}
		logStore.Close()
		return nil, err
	}
	n.snaps, err = raft.NewFileSnapshotStore(raftDir, 3, os.Stderr)
	if err != nil {
		return fail(fmt.Errorf("open snapshot store: %w", err))
	}

	if o.bindAddr == "" {
		_, t := raft.NewInmemTransport(raft.ServerAddress("local:" + o.serverID))
		n.transport = t
	} else {
		opts := serverport.Options{Advertise: o.advertise, Logger: o.logger}
		if o.peerTLS != nil {
			t := portTLS{accept: o.peerTLS, dial: o.dialTLS}
			opts.WrapServer, opts.WrapClient = t.wrapServer, t.wrapClient
		}
		n.port, err = serverport.Listen(o.bindAddr, opts)
		if err != nil {
			return fail(err)
		}
		net := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: n.port.Raft(), MaxPool: 3, Timeout: 10 * time.Second,
			Logger: hclog.New(&hclog.LoggerOptions{Name: "raft-net", Level: hclog.Warn, Output: os.Stderr}),
		})
		n.observer = newCommitObserver(net)
		n.transport = n.observer
	}

	has, err := raft.HasExistingState(logStore, logStore, n.snaps)
	if err != nil {
		return fail(fmt.Errorf("read raft state: %w", err))
	}
	if !has && o.bootstrapAlone {
		servers := []raft.Server{{ID: conf.LocalID, Address: n.transport.LocalAddr()}}
		if err := raft.BootstrapCluster(conf, logStore, logStore, n.snaps, n.transport, raft.Configuration{Servers: servers}); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return fail(fmt.Errorf("bootstrap raft: %w", err))
		}
		o.logger.Info("bootstrapped a new cell", "server", o.serverID, "raft", n.transport.LocalAddr())
	}
	n.raft, err = raft.NewRaft(conf, f, logStore, logStore, n.snaps, n.transport)
	if err != nil {
		return fail(fmt.Errorf("start raft: %w", err))
	}
	return n, nil
}

// addr is the raft address other servers reach this one at.
func (n *raftNode) addr() raft.ServerAddress { return n.transport.LocalAddr() }

// configuration returns the newest raft configuration this server knows.
func (n *raftNode) configuration() (raft.Configuration, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raft.Configuration{}, err
	}
	return f.Configuration(), nil
}

// wait returns a raft future's error, or ErrRaftShutdown once raft has
// shut down: with BatchApplyCh, raft never answers the futures still
// queued in its apply channel when it stops, and a caller waiting on one
// would hang the server's shutdown.
func (n *raftNode) wait(f raft.Future) error { return n.waitCtx(context.Background(), f) }

// waitCtx is wait that also gives up when ctx ends, with ctx's error.
func (n *raftNode) waitCtx(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.closed:
		select {
		case err := <-done:
			return err
		default:
			return raft.ErrRaftShutdown
		}
	}
}

func (n *raftNode) Close() error {
	err := n.raft.Shutdown().Error()
	close(n.closed)
	if c, ok := n.transport.(raft.WithClose); ok {
		c.Close()
	}
	if n.port != nil {
		n.port.Close()
	}
	if cerr := n.logStore.Close(); err == nil {
		err = cerr
	}
	return err
}
