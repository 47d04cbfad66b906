package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/api"
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
func (s *Server) selfInfo() peerInfo {
	p := peerInfo{ID: s.id, RaftAddr: string(s.raft.addr()), BootstrapExpect: s.cfg.BootstrapExpect}
	if s.listener != nil {
		p.HTTPAddr = s.Addr()
	}
	if c, err := s.raft.configuration(); err == nil && len(c.Servers) > 0 {
		p.HasState = true
	}
	return p
}

// memberAtAddr reports whether this server is a voter at its own address in
// the newest configuration it knows.
func (s *Server) memberAtAddr() bool {
	c, err := s.raft.configuration()
	if err != nil {
		return false
	}
	for _, srv := range c.Servers {
		if srv.ID == raft.ServerID(s.id) {
			return srv.Address == s.raft.addr() && srv.Suffrage == raft.Voter
		}
	}
	return false
}

// formCell runs until this server is a voter at its address in a cell with
// a known leader (see the comment at the top of this file).
func (s *Server) formCell(ctx context.Context) {
	var lastWhy string
	delay := 100 * time.Millisecond
	for {
		done, why, err := s.formStep(ctx)
		if done {
			s.logger.Info("member of the cell", "raft", s.raft.addr())
			return
		}
		switch {
		case err != nil && err.Error() != lastWhy:
			s.logger.Error("forming the cell", "err", err)
			lastWhy = err.Error()
		case err == nil && why != lastWhy && why != "":
			s.logger.Info("forming the cell", "status", why)
			lastWhy = why
		}
		// Jittered, so that servers started together do not move in step.
		if !sleepCtx(ctx, delay/2+rand.N(delay)) {
			return
		}
		delay = min(2*delay, time.Second)
	}
}

// formStep does one round of formation.
func (s *Server) formStep(ctx context.Context) (done bool, why string, err error) {
	member := s.memberAtAddr()
	_, leaderID := s.raft.raft.LeaderWithID()
	if member && leaderID != "" {
		return true, "", nil
	}
	answers := s.helloAll(ctx)
	self := s.selfInfo()
	if !member {
		for _, a := range answers {
			if a.LeaderAddr == "" || a.LeaderID == s.id {
				continue
			}
			if err := s.askToJoin(ctx, a.LeaderAddr); err != nil {
				return false, "", fmt.Errorf("ask leader %s (%s) to add this server: %w", a.LeaderID, a.LeaderAddr, err)
			}
			return false, "asked leader " + a.LeaderID + " to add this server; waiting for its log", nil
		}
	}
	if self.HasState {
		return false, "waiting for a leader", nil
	}
	if s.cfg.BootstrapExpect < 2 {
		return false, "waiting to join a cell through " + strings.Join(s.cfg.Join, ", "), nil
	}
	servers, why, err := bootstrapSet(self, s.peers.fresh(s.cfg.Now()))
	if servers == nil {
		return false, why, err
	}
	f := s.raft.raft.BootstrapCluster(raft.Configuration{Servers: servers})
	if err := f.Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return false, "", fmt.Errorf("bootstrap raft: %w", err)
	}
	ids := make([]string, len(servers))
	for i, srv := range servers {
		ids[i] = string(srv.ID)
	}
	s.logger.Info("bootstrapped a new cell", "servers", ids)
	return false, "bootstrapped; waiting for a leader", nil
}

// helloAll says hello to every server this one knows an address of and
// returns their answers.
func (s *Server) helloAll(ctx context.Context) []helloResponse {
	targets := map[string]bool{}
	for _, a := range s.cfg.Join {
		targets[a] = true
	}
	for _, a := range s.peers.addrs() {
		targets[a] = true
	}
	if c, err := s.raft.configuration(); err == nil {
		for _, srv := range c.Servers {
			targets[string(srv.Address)] = true
		}
	}
	delete(targets, string(s.raft.addr()))
	self := s.selfInfo()
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
			if err := s.peerCall(hctx, addr, "/v1/internal/hello", body, &resp); err != nil {
				s.logger.Debug("hello", "to", addr, "err", err)
				return
			}
			now := s.cfg.Now()
			s.peers.record(resp.Self, now)
			mu.Lock()
			answers = append(answers, resp)
			mu.Unlock()
			// Servers they know of are asked next round: transitive discovery,
			// so that every server may name only one other.
			for _, k := range resp.Known {
				if k.ID != s.id {
					s.peers.recordAddr(k)
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
func (s *Server) askToJoin(ctx context.Context, leaderAddr string) error {
	body, _ := json.Marshal(joinRequest{ID: s.id, RaftAddr: string(s.raft.addr())})
	jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.peerCall(jctx, leaderAddr, "/v1/internal/join", body, nil)
}

// peerCall POSTs a JSON body to another server's port and decodes the answer.
func (s *Server) peerCall(ctx context.Context, addr, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.peerHTTP.Do(req)
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
func (s *Server) handleHello(w http.ResponseWriter, r *http.Request) {
	var p peerInfo
	if err := decodeJSON(w, r, "bad-request", &p); err != nil {
		s.fail(w, err)
		return
	}
	s.peers.record(p, s.cfg.Now())
	addr, id := s.raft.raft.LeaderWithID()
	resp := helloResponse{Self: s.selfInfo(), LeaderID: string(id), LeaderAddr: string(addr)}
	for _, k := range s.peers.fresh(s.cfg.Now()) {
		if k.ID != p.ID {
			resp.Known = append(resp.Known, k)
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// handleJoin makes a server a voter (server port only, leader only).
func (s *Server) handleJoin(w http.ResponseWriter, r *http.Request) {
	var req joinRequest
	if err := decodeJSON(w, r, "bad-request", &req); err != nil {
		s.fail(w, err)
		return
	}
	if req.ID == "" || req.RaftAddr == "" {
		s.fail(w, badRequest("id and raftAddr are required"))
		return
	}
	if err := s.addVoter(raft.ServerID(req.ID), raft.ServerAddress(req.RaftAddr)); err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"joined": req.ID})
}

// addVoter makes id a voter at addr. A different server at the same
// address is removed first: it is the same machine that lost its data dir
// (and with it its id), and raft refuses two servers at one address.
func (s *Server) addVoter(id raft.ServerID, addr raft.ServerAddress) error {
	if !s.IsLeader() {
		return ErrNotLeader
	}
	c, err := s.raft.configuration()
	if err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	for _, srv := range c.Servers {
		switch {
		case srv.ID == id && srv.Address == addr && srv.Suffrage == raft.Voter:
			return nil // already there
		case srv.Address == addr && srv.ID != id:
			s.logger.Warn("removing the old server at a joining server's address", "old", srv.ID, "new", id, "addr", addr)
			if err := raftErr(s.raft.raft.RemoveServer(srv.ID, 0, 30*time.Second).Error()); err != nil {
				return fmt.Errorf("remove old server %s at %s: %w", srv.ID, addr, err)
			}
		}
	}
	if err := raftErr(s.raft.raft.AddVoter(id, addr, 0, 30*time.Second).Error()); err != nil {
		return fmt.Errorf("add voter %s at %s: %w", id, addr, err)
	}
	s.logger.Info("server joined the cell", "id", id, "raft", addr)
	return nil
}

// raftErr maps raft's not-leader errors to ErrNotLeader.
func raftErr(err error) error {
	if errors.Is(err, raft.ErrNotLeader) {
		return ErrNotLeader
	}
	return err
}

// sleepCtx waits d or until ctx is done; it reports whether ctx is live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
