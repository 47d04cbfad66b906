package scheduler

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/strata-dev/strata/api"
)

// followUps returns the evaluation that looks at the workload again when
// the clock alone changes what reconcile decided (rec.followUp): a delayed
// replacement falls due, an unknown allocation's grace ends. Its id is
// derived from the workload and the time, so every evaluation that asks
// for the same moment asks for the same follow-up (stored once), and the
// plan stays a pure function of its inputs.
func followUps(eval *api.Evaluation, w *api.Workload, rec reconciliation, now time.Time) []*api.Evaluation {
	if rec.followUp.IsZero() || w == nil {
		return nil
	}
	if eval.TriggeredBy == api.TriggerFollowUp && eval.WaitUntil.Equal(rec.followUp) {
		return nil // this very evaluation, run early: it is still pending
	}
	return []*api.Evaluation{{
		ID: followUpID(w.Name, rec.followUp), Workload: w.Name, Priority: w.Priority,
		TriggeredBy: api.TriggerFollowUp, Status: api.EvalPending,
		WaitUntil: rec.followUp, CreateTime: now,
	}}
}

// followUpID formats a hash of (workload, time) as a UUID.
func followUpID(workload string, at time.Time) string {
	h := fnv.New128a()
	h.Write([]byte(workload))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at.UnixNano()))
	h.Write(b[:])
	s := h.Sum(nil)
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}
