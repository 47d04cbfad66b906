package replica

import (
	"errors"
	"sync"

	"github.com/hashicorp/raft"
)

// commitObserver wraps a raft transport to learn the commit index leaders
// send in AppendEntries, which raft itself does not expose on a follower.
type commitObserver struct {
	raft.Transport
	consumer chan raft.RPC
	stop     chan struct{}

	mu     sync.Mutex
	term   uint64
	commit uint64
}

func newCommitObserver(t raft.Transport) *commitObserver {
	o := &commitObserver{Transport: t, consumer: make(chan raft.RPC), stop: make(chan struct{})}
	go o.relay()
	return o
}

var (
	_ raft.Transport   = (*commitObserver)(nil)
	_ raft.WithClose   = (*commitObserver)(nil)
	_ raft.WithPreVote = (*commitObserver)(nil)
)

func (o *commitObserver) relay() {
	in := o.Transport.Consumer()
	for {
		select {
		case rpc := <-in:
			if req, ok := rpc.Command.(*raft.AppendEntriesRequest); ok {
				o.observe(req.Term, req.LeaderCommitIndex)
			}
			select {
			case o.consumer <- rpc:
			case <-o.stop:
				return
			}
		case <-o.stop:
			return
		}
	}
}

func (o *commitObserver) observe(term, commit uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case term > o.term:
		o.term, o.commit = term, commit
	case term == o.term && commit > o.commit:
		o.commit = commit
	}
}

// leaderCommit returns the newest commit index a leader of term or later
// sent, 0 if none did.
func (o *commitObserver) leaderCommit(term uint64) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.term < term {
		return 0
	}
	return o.commit
}

// Consumer is the channel raft reads RPCs from, after they were observed.
func (o *commitObserver) Consumer() <-chan raft.RPC { return o.consumer }

// RequestPreVote passes pre-vote requests through when the inner transport
// supports them.
func (o *commitObserver) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if pv, ok := o.Transport.(raft.WithPreVote); ok {
		return pv.RequestPreVote(id, target, args, resp)
	}
	return errors.New("transport does not support pre-vote")
}

// Close stops the relay and closes the inner transport.
func (o *commitObserver) Close() error {
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	if c, ok := o.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}
