package agent

import (
	"testing"

	"github.com/strata-dev/strata/internal/agent/drivers/mock"
)

// labeledDriver is a mock driver that describes the node.
type labeledDriver struct {
	*mock.Driver
	labels map[string]string
}

func (d labeledDriver) Labels() map[string]string { return d.labels }

func TestDriversDescribeTheNode(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) {
		c.Labels = map[string]string{"rack": "r1", "driver.vm": "claimed by the operator"}
		c.Drivers = map[string]Driver{"vm": labeledDriver{Driver: mock.New(), labels: map[string]string{"driver.vm": "1", "vm.accel": "tcg"}}}
	})
	n := srv.node(ag.NodeID())
	for k, want := range map[string]string{"rack": "r1", "driver.vm": "1", "vm.accel": "tcg"} {
		if n.Labels[k] != want {
			t.Errorf("label %s = %q, want %q (labels %v)", k, n.Labels[k], want, n.Labels)
		}
	}
}

// With the micro-VM driver off, the node neither offers nor labels it.
func TestMicroVMOffIsNotOffered(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	n := srv.node(ag.NodeID())
	if _, ok := n.Labels["driver.microvm"]; ok {
		t.Errorf("labels %v advertise the micro-VM driver that is off", n.Labels)
	}
	if ag.drivers.Get("microvm") != nil {
		t.Error("micro-VM driver registered although off")
	}
}
