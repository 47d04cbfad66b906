package fsm

// Log is where commands are committed: the replica. Commit hands entries
// to the replicated log in order and returns the index of the last and
// the FSM's answer to it, once it applied on this server; an error names
// the first entry that failed (those before it are committed). name
// labels the entries in errors.
type Log interface {
	Commit(name string, entries ...[]byte) (index uint64, answer any, err error)
}

// Proposer encodes commands and commits them through a Log: the one way
// the leader's loops and the API write state.
type Proposer struct {
	log   Log
	table *Table
}

// NewProposer proposes through log with the server's command table.
func NewProposer(log Log) *Proposer { return &Proposer{log: log, table: Commands} }

// Propose commits one command (a pointer to a command's body) and returns
// its index and the FSM's answer (Registered, Stopped, Migrated; nil for
// the others). An error the command's Apply returned comes back wrapped.
func (p *Proposer) Propose(body any) (uint64, any, error) {
	buf, err := p.table.Encode(body)
	if err != nil {
		return 0, nil, err
	}
	return p.log.Commit(p.table.Name(Type(buf[0])), buf)
}

// ProposePlan commits the entries PlanParts encoded, together, so that
// they share raft's batches.
func (p *Proposer) ProposePlan(parts [][]byte) (uint64, error) {
	idx, _, err := p.log.Commit(p.table.Name(planPartValue), parts...)
	return idx, err
}
