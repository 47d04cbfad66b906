package lease

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestAgentFence(t *testing.T) {
	p := Params{Drift: 0.01, Margin: 250 * time.Millisecond}
	tests := []struct {
		name               string
		sent, lease, grace time.Duration
		want               Fence
	}{
		{"10s lease, 5s grace", 100 * time.Second, 10 * time.Second, 5 * time.Second,
			Fence{StopAt: 100*time.Second + 9650*time.Millisecond - 5*time.Second, KillAt: 100*time.Second + 9650*time.Millisecond}},
		{"no grace", 0, 4 * time.Second, 0, Fence{StopAt: 3710 * time.Millisecond, KillAt: 3710 * time.Millisecond}},
		{"grace longer than the lease", 0, 2 * time.Second, 5 * time.Second, Fence{StopAt: 0, KillAt: 1730 * time.Millisecond, Short: true}},
		{"lease shorter than the margin", time.Second, 100 * time.Millisecond, 0, Fence{StopAt: time.Second, KillAt: time.Second, Short: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AgentFence(p, tt.sent, tt.lease, tt.grace); got != tt.want {
				t.Fatalf("AgentFence = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestServerReplaceAfter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := Params{Drift: 0.01, Margin: 250 * time.Millisecond}
	tests := []struct {
		name         string
		lease, grace time.Duration
		want         time.Duration
	}{
		{"10s lease, 5s grace", 10 * time.Second, 5 * time.Second, 10200*time.Millisecond + 5*time.Second + 250*time.Millisecond},
		{"no drift allowance beyond the margin", 0, 0, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ServerReplaceAfter(p, t0, tt.lease, tt.grace); !got.Equal(t0.Add(tt.want)) {
				t.Fatalf("ServerReplaceAfter = +%s, want +%s", got.Sub(t0), tt.want)
			}
		})
	}
}

// TestNoOverlapUnderDrift is invariant 8 in arithmetic: whatever the
// lease, grace, delays and clock rates (within Drift), the agent's copy is
// dead, by real time, before the server's replacement may start.
func TestNoOverlapUnderDrift(t *testing.T) {
	p := Defaults()
	rapid.Check(t, func(t *rapid.T) {
		lease := time.Duration(rapid.Int64Range(int64(time.Second), int64(5*time.Minute)).Draw(t, "lease"))
		grace := time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "grace"))
		// Real times: the agent sends its renewal at 0; the server sees it
		// after a network delay.
		delay := time.Duration(rapid.Int64Range(0, int64(10*time.Second)).Draw(t, "delay"))
		agentRate := 1 + rapid.Float64Range(-p.Drift, p.Drift).Draw(t, "agentRate")   // agent seconds per real second
		serverRate := 1 + rapid.Float64Range(-p.Drift, p.Drift).Draw(t, "serverRate") // server seconds per real second

		f := AgentFence(p, 0, lease, grace)
		agentDeadReal := float64(f.KillAt) / agentRate // agent's clock reads KillAt at this real time
		seen := time.Unix(0, 0)
		replaceServerClock := ServerReplaceAfter(p, seen, lease, grace).Sub(seen)
		replaceReal := float64(delay) + float64(replaceServerClock)/serverRate
		if agentDeadReal >= replaceReal {
			t.Fatalf("copy dead at %.0fns real, replacement allowed at %.0fns real (fence %+v)", agentDeadReal, replaceReal, f)
		}
	})
}
