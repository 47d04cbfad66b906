package server

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// BenchmarkServerMemory100kAllocs submits one workload of 100,000
// replicas to a one-server cell of 1,000 nodes and reports what the
// server keeps for them: heap bytes per allocation once they are placed
// (after a GC, minus the heap before the submit), the raft log's bytes
// per allocation, and the process's peak RSS. Run it alone (-benchtime 1x)
// so the peak is this run's.
func BenchmarkServerMemory100kAllocs(b *testing.B) {
	const replicas = 100_000
	for i := 0; i < b.N; i++ {
		s := quietServer(b)
		registerNodes(b, s, 1000)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		first, _ := s.replica.LogStore().LastIndex()
		name := fmt.Sprintf("mem-%d", i)
		submit(b, s, fmt.Sprintf(largePlanWorkload, name, replicas))
		waitPlaced(b, s, name, replicas)
		waitBrokerIdle(b, s) // the worker lets go of its plan once acked
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		last, _ := s.replica.LogStore().LastIndex()
		logBytes := 0
		for idx := first + 1; idx <= last; idx++ {
			var l raft.Log
			if err := s.replica.LogStore().GetLog(idx, &l); err == nil {
				logBytes += len(l.Data)
			}
		}
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/replicas, "heap-B/alloc")
		b.ReportMetric(float64(logBytes)/replicas, "log-B/alloc")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
	}
}

// waitBrokerIdle waits until no evaluation is queued or in flight.
func waitBrokerIdle(tb testing.TB, s *Server) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ready, inflight, _ := s.leader.BrokerStats()
		if ready == 0 && inflight == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("broker still busy after a minute: %d ready, %d in flight", ready, inflight)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// peakRSS is the process's VmHWM in bytes, or -1.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return -1
			}
			kb, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}
