package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/backoff"
	"github.com/strata-dev/strata/internal/httpapi/route"
)

// Forming a cell of several servers, without hand-written files:
//
//   - Every server says hello (over the server port) to the servers it was
//     given with --join, to those they know of, and to those in its own raft
//     configuration. A hello carries who the server is (id, raft address,
//     --bootstrap-expect, whether it already holds raft state) and is
//     answered with the same about the other side, its leader, and the
//     servers it has heard from.
//   - A server with no state that has heard, directly and recently, from
//     exactly --bootstrap-expect servers with no state (itself included),
//     all expecting the same number, bootstraps raft with that set, sorted
//     by id. Every one of them computes the same configuration, which
//     makes bootstrapping on several of them safe (hashicorp/raft's rule).
//   - A server that is not a voter at its own address in a cell that has a
//     leader asks that leader to add it (POST /v1/internal/join): a new
//     server joining, a server whose data dir was wiped (new id, same
//     address: the leader drops the old id first), a server whose address
//     changed.
//   - A server with state that is a voter at its address needs nothing:
//     raft's own configuration brings it back after a restart.
//
// Formation ends once the server is a voter at its address and knows a
// leader. A server removed with `strata operator raft remove-peer` that
// keeps running stays out; restarted, it asks to be added again.

// peerInfo is what a server tells the others about itself.
type peerInfo struct {
	ID              string `json:"id"`
	RaftAddr        string `json:"raftAddr"`
	HTTPAddr        string `json:"httpAddr,omitempty"`
	BootstrapExpect int    `json:"bootstrapExpect"`
	// HasState: the server holds a raft configuration (a cell).
	HasState bool `json:"hasState"`
}

// helloResponse answers a hello.
type helloResponse struct {
	Self       peerInfo   `json:"self"`
	LeaderID   string     `json:"leaderId,omitempty"`
	LeaderAddr string     `json:"leaderAddr,omitempty"`
	Known      []peerInfo `json:"known,omitempty"`
}

// joinRequest asks the leader to make a server a voter.
type joinRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
}

// formationWaits bound the waits between rounds of formation.
var formationWaits = backoff.Policy{Base: 50 * time.Millisecond, Max: time.Second}

// peerFreshness is how long a server heard from counts toward
// --bootstrap-expect.
const peerFreshness = 10 * time.Second

// peerBook remembers the servers this one heard from during formation.
type peerBook struct {
	mu   sync.Mutex
	seen map[string]peerSeen // by id
}

type peerSeen struct {
	info peerInfo
	at   time.Time
}

func (b *peerBook) record(p peerInfo, now time.Time) {
	if p.ID == "" || p.RaftAddr == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == nil {
		b.seen = map[string]peerSeen{}
	}
	b.seen[p.ID] = peerSeen{info: p, at: now}
}

// fresh returns the servers heard from within peerFreshness, by id.
func (b *peerBook) fresh(now time.Time) []peerInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []peerInfo
	for _, s := range b.seen {
		if now.Sub(s.at) <= peerFreshness {
			out = append(out, s.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// bootstrapSet decides whether the servers heard from (self included)
// make the cell --bootstrap-expect asks for. It returns the configuration
// to bootstrap, or nil and why not yet. It is a pure function.
func bootstrapSet(self peerInfo, heard []peerInfo) ([]raft.Server, string, error) {
	servers := []peerInfo{self}
	for _, p := range heard {
		if p.ID == self.ID {
			continue
		}
		if p.HasState {
			return nil, fmt.Sprintf("server %s (%s) already belongs to a cell; waiting to join it", p.ID, p.RaftAddr), nil
		}
		if p.BootstrapExpect != self.BootstrapExpect {
			return nil, "", fmt.Errorf("server %s (%s) has --bootstrap-expect %d, this one %d: give every server of a new cell the same number",
				p.ID, p.RaftAddr, p.BootstrapExpect, self.BootstrapExpect)
		}
		servers = append(servers, p)
	}
	switch {
	case len(servers) < self.BootstrapExpect:
		return nil, fmt.Sprintf("waiting for servers: %d of %d known", len(servers), self.BootstrapExpect), nil
	case len(servers) > self.BootstrapExpect:
		return nil, "", fmt.Errorf("%d servers with no state are forming a cell, but --bootstrap-expect is %d: refusing to guess which belong together", len(servers), self.BootstrapExpect)
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	out := make([]raft.Server, len(servers))
	for i, p := range servers {
		out[i] = raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr)}
	}
	return out, "", nil
}

// selfInfo describes this server for a hello.
func (r *Replica) selfInfo() peerInfo {
	p := peerInfo{ID: r.cfg.ID, RaftAddr: string(r.raft.addr()), BootstrapExpect: r.cfg.BootstrapExpect, HTTPAddr: r.cfg.APIAddr}
	if c, err := r.raft.configuration(); err == nil && len(c.Servers) > 0 {
		p.HasState = true
	}
	return p
}

// memberAtAddr reports whether this server is a voter at its own address in
// the newest configuration it knows.
func (r *Replica) memberAtAddr() bool {
	c, err := r.raft.configuration()
	if err != nil {
		return false
	}
	for _, srv := range c.Servers {
		if srv.ID == raft.ServerID(r.cfg.ID) {
			return srv.Address == r.raft.addr() && srv.Suffrage == raft.Voter
		}
	}
	return false
}

// formCell runs until this server is a voter at its address in a cell with
// a known leader (see the comment at the top of this file).
func (r *Replica) formCell(ctx context.Context) {
	var lastWhy string
	var delay time.Duration
	for {
		done, why, err := r.formStep(ctx)
		if done {
			r.logger.Info("member of the cell", "raft", r.raft.addr())
			return
		}
		switch {
		case err != nil && err.Error() != lastWhy:
			r.logger.Error("forming the cell", "err", err)
			lastWhy = err.Error()
		case err == nil && why != lastWhy && why != "":
			r.logger.Info("forming the cell", "status", why)
			lastWhy = why
		}
		// Jittered, so that servers started together do not move in step.
		delay = formationWaits.Next(delay)
		if !backoff.Sleep(ctx, delay) {
			return
		}
	}
}

// formStep does one round of formation.
func (r *Replica) formStep(ctx context.Context) (done bool, why string, err error) {
	member := r.memberAtAddr()
	_, leaderID := r.raft.raft.LeaderWithID()
	if member && leaderID != "" {
		return true, "", nil
	}
	answers := r.helloAll(ctx)
	self := r.selfInfo()
	if !member {
		for _, a := range answers {
			if a.LeaderAddr == "" || a.LeaderID == r.cfg.ID {
				continue
			}
			if err := r.askToJoin(ctx, a.LeaderAddr); err != nil {
				return false, "", fmt.Errorf("ask leader %s (%s) to add this server: %w", a.LeaderID, a.LeaderAddr, err)
			}
			return false, "asked leader " + a.LeaderID + " to add this server; waiting for its log", nil
		}
	}
	if self.HasState {
		return false, "waiting for a leader", nil
	}
	if r.cfg.BootstrapExpect < 2 {
		return false, "waiting to join a cell through " + strings.Join(r.cfg.Join, ", "), nil
	}
	servers, why, err := bootstrapSet(self, r.peers.fresh(r.cfg.Now()))
	if servers == nil {
		return false, why, err
	}
	f := r.raft.raft.BootstrapCluster(raft.Configuration{Servers: servers})
	if err := f.Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return false, "", fmt.Errorf("bootstrap raft: %w", err)
	}
	ids := make([]string, len(servers))
	for i, srv := range servers {
		ids[i] = string(srv.ID)
	}
	r.logger.Info("bootstrapped a new cell", "servers", ids)
	return false, "bootstrapped; waiting for a leader", nil
}

// helloAll says hello to every server this one knows an address of and
// returns their answers.
func (r *Replica) helloAll(ctx context.Context) []helloResponse {
	targets := map[string]bool{}
	for _, a := range r.cfg.Join {
		targets[a] = true
	}
	for _, a := range r.peers.addrs() {
		targets[a] = true
	}
	if c, err := r.raft.configuration(); err == nil {
		for _, srv := range c.Servers {
			targets[string(srv.Address)] = true
		}
	}
	delete(targets, string(r.raft.addr()))
	self := r.selfInfo()
	body, _ := json.Marshal(self)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var answers []helloResponse
	for addr := range targets {
		if !strings.Contains(addr, ":") || strings.HasPrefix(addr, "local:") {
			continue // an in-memory address from a former single-server life
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			var resp helloResponse
			if err := r.peerCall(hctx, addr, "/v1/internal/hello", body, &resp); err != nil {
				r.logger.Debug("hello", "to", addr, "err", err)
				return
			}
			now := r.cfg.Now()
			r.peers.record(resp.Self, now)
			mu.Lock()
			answers = append(answers, resp)
			mu.Unlock()
			// Servers they know of are asked next round: transitive discovery,
			// so that every server may name only one other.
			for _, k := range resp.Known {
				if k.ID != r.cfg.ID {
					r.peers.recordAddr(k)
				}
			}
		}()
	}
	wg.Wait()
	return answers
}

// recordAddr remembers a server heard of second-hand, as an address to say
// hello to; it does not count toward --bootstrap-expect until it answers.
func (b *peerBook) recordAddr(p peerInfo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == nil {
		b.seen = map[string]peerSeen{}
	}
	if _, ok := b.seen[p.ID]; !ok {
		b.seen[p.ID] = peerSeen{info: p} // zero time: not fresh, but dialled
	}
}

// addrs returns every address in the book, fresh or not.
func (b *peerBook) addrs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, s := range b.seen {
		out = append(out, s.info.RaftAddr)
	}
	return out
}

// askToJoin asks the leader at addr to make this server a voter.
func (r *Replica) askToJoin(ctx context.Context, leaderAddr string) error {
	body, _ := json.Marshal(joinRequest{ID: r.cfg.ID, RaftAddr: string(r.raft.addr())})
	jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return r.peerCall(jctx, leaderAddr, "/v1/internal/join", body, nil)
}

// peerCall POSTs a JSON body to another server's port and decodes the answer.
func (r *Replica) peerCall(ctx context.Context, addr, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.peerHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var er api.ErrorResponse
		if json.Unmarshal(b, &er) == nil && er.Error != "" {
			return fmt.Errorf("%s: %s", resp.Status, er.Error)
		}
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// handleHello answers another server's hello (server port only).
func (r *Replica) handleHello(w http.ResponseWriter, req *http.Request) {
	var p peerInfo
	if err := route.DecodeJSON(w, req, "bad-request", &p); err != nil {
		route.Fail(w, err, r.logger)
		return
	}
	r.peers.record(p, r.cfg.Now())
	addr, id := r.raft.raft.LeaderWithID()
	resp := helloResponse{Self: r.selfInfo(), LeaderID: string(id), LeaderAddr: string(addr)}
	for _, k := range r.peers.fresh(r.cfg.Now()) {
		if k.ID != p.ID {
			resp.Known = append(resp.Known, k)
		}
	}
	route.WriteJSON(w, http.StatusOK, resp)
}

// handleJoin makes a server a voter (server port only, leader only).
func (r *Replica) handleJoin(w http.ResponseWriter, req *http.Request) {
	var join joinRequest
	if err := route.DecodeJSON(w, req, "bad-request", &join); err != nil {
		route.Fail(w, err, r.logger)
		return
	}
	if join.ID == "" || join.RaftAddr == "" {
		route.Fail(w, route.BadRequest("id and raftAddr are required"), r.logger)
		return
	}
	if err := r.addVoter(raft.ServerID(join.ID), raft.ServerAddress(join.RaftAddr)); err != nil {
		route.Fail(w, err, r.logger)
		return
	}
	route.WriteJSON(w, http.StatusOK, map[string]string{"joined": join.ID})
}

// addVoter makes id a voter at addr. A different server at the same
// address is removed first: it is the same machine that lost its data dir
// (and with it its id), and raft refuses two servers at one address.
func (r *Replica) addVoter(id raft.ServerID, addr raft.ServerAddress) error {
	if !r.IsLeader() {
		return ErrNotLeader
	}
	c, err := r.raft.configuration()
	if err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	for _, srv := range c.Servers {
		switch {
		case srv.ID == id && srv.Address == addr && srv.Suffrage == raft.Voter:
			return nil // already there
		case srv.Address == addr && srv.ID != id:
			r.logger.Warn("removing the old server at a joining server's address", "old", srv.ID, "new", id, "addr", addr)
			if err := raftErr(r.raft.raft.RemoveServer(srv.ID, 0, 30*time.Second).Error()); err != nil {
				return fmt.Errorf("remove old server %s at %s: %w", srv.ID, addr, err)
			}
		}
	}
	if err := raftErr(r.raft.raft.AddVoter(id, addr, 0, 30*time.Second).Error()); err != nil {
		return fmt.Errorf("add voter %s at %s: %w", id, addr, err)
	}
	r.logger.Info("server joined the cell", "id", id, "raft", addr)
	return nil
}
