package failsim

import (
	"context"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// burstTickets is a year of tickets where racks fail in bursts: each
// burst strikes a rack's nodes one after another, a day apart, so a model
// that raises a rack's risk after its first failure sees the rest coming.
func burstTickets(racks, perBurst int) []trace.Ticket {
	var out []trace.Ticket
	t := int64(1_500_000_000)
	for r := range racks {
		for k := range perBurst {
			out = append(out, trace.Ticket{Time: t + int64(k)*86400, Node: fmt.Sprintf("r%d-n%d", r, k), Rack: fmt.Sprint("r", r), Room: fmt.Sprint("m", r%4)})
		}
		t += 9 * 86400
	}
	return out
}

func TestReplayPredictiveCutsInterruptionsOnBursts(t *testing.T) {
	tks := burstTickets(30, 4)
	fleet, err := BuildFleet(tks, 8)
	if err != nil {
		t.Fatal(err)
	}
	if fleet.Len() != 30*8 || fleet.Racks() != 30 {
		t.Fatalf("fleet of %d nodes in %d racks, want 240 in 30", fleet.Len(), fleet.Racks())
	}
	cfg := DefaultReplay
	cfg.Budget = 0.1
	reactive, err := Replay(context.Background(), fleet, tks, cfg, Reactive)
	if err != nil {
		t.Fatal(err)
	}
	predictive, err := Replay(context.Background(), fleet, tks, cfg, Predictive)
	if err != nil {
		t.Fatal(err)
	}
	if reactive.Failures != len(tks) || predictive.Failures != len(tks) || reactive.Tasks != predictive.Tasks {
		t.Fatalf("replays disagree on the workload: %+v vs %+v", reactive, predictive)
	}
	if predictive.Interrupted >= reactive.Interrupted*3/4 {
		t.Errorf("on rack bursts predictive interrupts %d replicas, reactive %d: want at least a quarter fewer", predictive.Interrupted, reactive.Interrupted)
	}
	if predictive.StruckDrained == 0 || predictive.Migrations == 0 || predictive.DrainedShare > cfg.Budget {
		t.Errorf("predictive drained %.3f of the fleet (budget %v), %d failures struck drained nodes, %d migrations",
			predictive.DrainedShare, cfg.Budget, predictive.StruckDrained, predictive.Migrations)
	}
	if d := predictive.DoubleLosses; d.SameRack != 0 || d.SameNode != 0 {
		t.Errorf("replicas spread over racks, yet a rack took two: %+v", d)
	}
	again, _ := Replay(context.Background(), fleet, tks, cfg, Predictive)
	if *again != *predictive {
		t.Error("two replays with one seed differ")
	}
}

func TestReplayRefusesBadInput(t *testing.T) {
	tks := burstTickets(2, 2)
	fleet, _ := BuildFleet(tks, 4)
	for _, tc := range []struct {
		name   string
		mod    func(*ReplayConfig)
		policy string
	}{
		{"unknown policy", func(*ReplayConfig) {}, "clairvoyant"},
		{"no slots", func(c *ReplayConfig) { c.SlotsPerNode = 0 }, Reactive},
		{"budget of the whole fleet", func(c *ReplayConfig) { c.Budget = 1 }, Predictive},
		{"more replicas than nodes", func(c *ReplayConfig) { c.Replicas = 9 }, Reactive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultReplay
			tc.mod(&cfg)
			if _, err := Replay(context.Background(), fleet, tks, cfg, tc.policy); err == nil {
				t.Error("accepted")
			}
		})
	}
	if _, err := BuildFleet([]trace.Ticket{{Node: "n", Rack: "a"}, {Node: "n", Rack: "b"}}, 1); err == nil {
		t.Error("a node in two racks was accepted")
	}
	if _, err := Replay(context.Background(), fleet, []trace.Ticket{{Node: "stranger", Rack: "x"}}, DefaultReplay, Reactive); err == nil {
		t.Error("a ticket for a node outside the fleet was accepted")
	}
}
