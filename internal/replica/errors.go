package replica

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
)

// retryAfter is what a not-ready or not-leader answer tells clients to wait
// at most; Strata's own client retries sooner, with its own backoff.
const retryAfter = time.Second

// unavailable is an error of the replica that answers 503: the request
// was not served here, now; the client may retry (route.Reply).
type unavailable struct {
	msg   string
	reply func(chain error) *route.Error
}

func (u *unavailable) Error() string                  { return u.msg }
func (u *unavailable) Reply(chain error) *route.Error { return u.reply(chain) }

// ErrNotLeader is returned by writes on a server that does not lead. The
// write was not applied: a client may retry it.
var ErrNotLeader error = &unavailable{msg: "this server is not the leader", reply: func(chain error) *route.Error {
	return &route.Error{Status: http.StatusServiceUnavailable, Code: "not-leader", Msg: chain.Error() + "; retry", RetryAfter: retryAfter}
}}

// ErrNoQuorum is not-leader from a server that has known no leader for
// far longer than an election takes (Config.NoQuorumAfter): it cannot
// reach a majority of the cell's voting servers. Answered 503 no-quorum; a
// client tries the other servers it knows, and gives up at once when none
// leads.
var ErrNoQuorum error = &unavailable{msg: "the cell has no quorum", reply: func(chain error) *route.Error {
	return &route.Error{Status: http.StatusServiceUnavailable, Code: api.CodeNoQuorum, Msg: chain.Error()}
}}

// ErrOutcomeUnknown is returned by a write whose raft entry may or may not
// be committed: leadership was lost, or raft shut down, after it was
// appended. A client must read before it retries a write that is not
// idempotent.
var ErrOutcomeUnknown error = &unavailable{msg: "the write may or may not have been applied", reply: func(chain error) *route.Error {
	return &route.Error{Status: http.StatusServiceUnavailable, Code: "outcome-unknown", Msg: chain.Error() + "; read the state before retrying", Warn: true}
}}

// ErrNotReady is wrapped by readiness errors: this server's state is not
// caught up enough to answer from. The answer is 503 not-ready with
// Retry-After.
var ErrNotReady error = &unavailable{msg: "not ready", reply: func(chain error) *route.Error {
	msg := strings.TrimPrefix(chain.Error(), "not ready: ")
	return &route.Error{Status: http.StatusServiceUnavailable, Code: "not-ready", Msg: "this server is not ready to serve: " + msg + "; retry",
		RetryAfter: retryAfter}
}}

// ErrBadSnapshot is wrapped by every reason a snapshot file is refused.
var ErrBadSnapshot = errors.New("not a valid strata snapshot")
