package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// raftNode bundles raft with the stores it owns so they close together.
type raftNode struct {
	raft      *raft.Raft
	logStore  *raftboltdb.BoltStore
	transport raft.Transport
	// observer learns leaders' commit indexes (TCP transport only).
	observer *commitObserver
	closer   io.Closer
}

// openRaft opens (or bootstraps) the raft node in dataDir. With bindAddr
// empty it uses an in-memory transport: a one-server cell needs no network
// for raft, and the address stays stable across restarts. Several servers
// bind a TCP address and list each other in peers (id=addr).
func openRaft(dataDir, serverID, bindAddr string, peers []string, f raft.FSM, logger *slog.Logger) (*raftNode, error) {
	raftDir := filepath.Join(dataDir, "raft")
	if err := os.MkdirAll(raftDir, 0o700); err != nil {
		return nil, fmt.Errorf("create raft dir: %w", err)
	}
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(serverID)
	conf.BatchApplyCh = true
	conf.MaxAppendEntries = 512
	conf.SnapshotThreshold = 8192
	conf.SnapshotInterval = 30 * time.Second
	conf.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})
	if bindAddr == "" {
		// A lone voter: elect itself quickly.
		conf.HeartbeatTimeout = 200 * time.Millisecond
		conf.ElectionTimeout = 200 * time.Millisecond
		conf.LeaderLeaseTimeout = 100 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
	}

	logStore, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(raftDir, "raft.db")})
	if err != nil {
		return nil, fmt.Errorf("open raft log %s: %w", raftDir, err)
	}
	snaps, err := raft.NewFileSnapshotStore(raftDir, 3, os.Stderr)
	if err != nil {
		logStore.Close()
		return nil, fmt.Errorf("open snapshot store: %w", err)
	}

	var trans raft.Transport
	var closer io.Closer
	var observer *commitObserver
	if bindAddr == "" {
		_, t := raft.NewInmemTransport(raft.ServerAddress("local:" + serverID))
		trans = t
		closer = t
	} else {
		addr, err := net.ResolveTCPAddr("tcp", bindAddr)
		if err != nil {
			logStore.Close()
			return nil, fmt.Errorf("raft address %q: %w", bindAddr, err)
		}
		t, err := raft.NewTCPTransport(bindAddr, addr, 3, 10*time.Second, os.Stderr)
		if err != nil {
			logStore.Close()
			return nil, fmt.Errorf("raft transport on %s: %w", bindAddr, err)
		}
		observer = newCommitObserver(t)
		trans = observer
		closer = observer
	}

	has, err := raft.HasExistingState(logStore, logStore, snaps)
	if err != nil {
		logStore.Close()
		return nil, fmt.Errorf("read raft state: %w", err)
	}
	if !has {
		servers := []raft.Server{{ID: conf.LocalID, Address: trans.LocalAddr()}}
		for _, p := range peers {
			id, addr, ok := strings.Cut(p, "=")
			if !ok {
				logStore.Close()
				return nil, fmt.Errorf("peer %q: want id=host:port", p)
			}
			if raft.ServerID(id) != conf.LocalID {
				servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raft.ServerAddress(addr)})
			}
		}
		if err := raft.BootstrapCluster(conf, logStore, logStore, snaps, trans, raft.Configuration{Servers: servers}); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			logStore.Close()
			return nil, fmt.Errorf("bootstrap raft: %w", err)
		}
		logger.Info("bootstrapped raft", "server", serverID, "voters", len(servers))
	}
	r, err := raft.NewRaft(conf, f, logStore, logStore, snaps, trans)
	if err != nil {
		logStore.Close()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	return &raftNode{raft: r, logStore: logStore, transport: trans, observer: observer, closer: closer}, nil
}

func (n *raftNode) Close() error {
	err := n.raft.Shutdown().Error()
	if n.closer != nil {
		n.closer.Close()
	}
	if cerr := n.logStore.Close(); err == nil {
		err = cerr
	}
	return err
}
