package churn

import (
	"context"
	"fmt"
	"slices"

	"github.com/strata-dev/strata/internal/sim/eventq"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// PooledName is the pooled bound's name in results.
const PooledName = "pooled-bound"

// pool is the summed capacity of the nodes of one GPU model.
type pool struct {
	model                  string
	cpu, mem, gpu          int64 // free
	capCPU, capMem, capGPU int64
}

func (p *pool) fits(pod *trace.Pod) bool {
	if p.cpu < pod.CPUMilli || p.mem < pod.MemoryMiB || p.gpu < pod.GPURequestMilli() {
		return false
	}
	return pod.NumGPU == 0 || (p.model != "" && pod.AcceptsModel(p.model))
}

// Pooled runs cfg's arrival stream on the pooled cell: one pool per GPU
// model holding the CPU, memory and milli-GPU of all its nodes, with no
// node or GPU boundary inside it, and the same wait queue and patience as
// Run. A pod goes to an accepted pool with the room (the one with the
// most free GPU for a GPU pod, the most free CPU otherwise, CPU-only
// pools first). What a placement loses to node and GPU boundaries, this
// bound does not: the gap between it and a policy is the capacity the
// policy loses to fragmentation.
func Pooled(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var pools []pool
	var capGPU int64
	for i := range cfg.Nodes {
		n := &cfg.Nodes[i]
		k := slices.IndexFunc(pools, func(p pool) bool { return p.model == n.GPUModel })
		if k < 0 {
			k = len(pools)
			pools = append(pools, pool{model: n.GPUModel})
		}
		p := &pools[k]
		g := int64(n.GPUs) * trace.MilliPerGPU
		p.capCPU, p.capMem, p.capGPU = p.capCPU+n.CPUMilli, p.capMem+n.MemoryMiB, p.capGPU+g
		capGPU += g
	}
	var capCPU, capMem int64
	for i := range pools {
		p := &pools[i]
		p.cpu, p.mem, p.gpu = p.capCPU, p.capMem, p.capGPU
		capCPU, capMem = capCPU+p.capCPU, capMem+p.capMem
	}
	stream, err := NewStream(cfg.Pods, capGPU, cfg.load(), uint64(cfg.Seed))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	res := Result{Policy: PooledName, Seed: cfg.Seed, Load: cfg.load(), ArrivalsPerDay: stream.Rate(), Days: cfg.Days}
	leave := eventq.New(heldFirst)
	queue := waitQueue{patience: cfg.patience()}
	start := int64(cfg.Warmup * 86400)
	end := start + int64(cfg.Days*86400)
	var (
		samples, running, seq  int
		gpuSum, cpuSum, memSum float64
		runSum, waitSum        float64
		arrivedGPU, awayGPU    int64
	)
	place := func(a Arrival, now int64) bool {
		best := -1
		for k := range pools {
			if pools[k].fits(a.Pod) && (best < 0 || better(&pools[k], &pools[best], a.Pod)) {
				best = k
			}
		}
		if best < 0 {
			return false
		}
		p, pod := &pools[best], a.Pod
		p.cpu, p.mem, p.gpu = p.cpu-pod.CPUMilli, p.mem-pod.MemoryMiB, p.gpu-pod.GPURequestMilli()
		seq++
		leave.Push(pooledHeld{at: now + a.Life, pool: best, pod: pod, seq: seq})
		running++
		if a.At >= start {
			res.Placed++
			if now > a.At {
				res.Waited++
				waitSum += float64(now - a.At)
			}
		}
		return true
	}
	for _, a := range stream.Initial() {
		if !place(a, 0) {
			queue.pods = append(queue.pods, a)
		}
	}
	next := stream.Next()
	nextSample := start
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		t, kind := next.At, evArrive
		if nextSample <= t {
			t, kind = nextSample, evSample
		}
		if x, ok := queue.nextExpiry(); ok && x <= t {
			t, kind = x, evExpire
		}
		if l, ok := leave.Peek(); ok && l.at <= t {
			t, kind = l.at, evLeave
		}
		if t >= end {
			break
		}
		switch kind {
		case evLeave:
			l := leave.Pop()
			p := &pools[l.pool]
			p.cpu, p.mem, p.gpu = p.cpu+l.pod.CPUMilli, p.mem+l.pod.MemoryMiB, p.gpu+l.pod.GPURequestMilli()
			running--
			queue.retry(func(a Arrival) bool { return p.fits(a.Pod) && place(a, t) })
		case evExpire:
			for _, a := range queue.expire(t) {
				if a.At >= start {
					res.TurnedAway++
					awayGPU += a.Pod.GPURequestMilli()
					if res.TurnedAwayBy == nil {
						res.TurnedAwayBy = map[string]int{}
					}
					res.TurnedAwayBy[askOf(a.Pod)]++
				}
			}
		case evSample:
			var cpu, mem, gpu int64
			for _, p := range pools {
				cpu, mem, gpu = cpu+p.capCPU-p.cpu, mem+p.capMem-p.mem, gpu+p.capGPU-p.gpu
			}
			samples++
			gpuSum += share(gpu, capGPU)
			cpuSum += share(cpu, capCPU)
			memSum += share(mem, capMem)
			runSum += float64(running)
			nextSample += cfg.sample()
		case evArrive:
			if t >= start {
				res.Arrived++
				arrivedGPU += next.Pod.GPURequestMilli()
			}
			if !place(next, t) {
				queue.pods = append(queue.pods, next)
			}
			next = stream.Next()
		}
	}
	if samples > 0 {
		s := float64(samples)
		res.GPUAlloc, res.CPUAlloc, res.MemAlloc, res.Running = gpuSum/s, cpuSum/s, memSum/s, runSum/s
	}
	if arrivedGPU > 0 {
		res.TurnedAwayGPU = 100 * float64(awayGPU) / float64(arrivedGPU)
	}
	if res.Waited > 0 {
		res.WaitMean = waitSum / float64(res.Waited)
	}
	return &res, nil
}

// better reports whether pool a suits pod more than pool b.
func better(a, b *pool, pod *trace.Pod) bool {
	if pod.NumGPU > 0 {
		return a.gpu > b.gpu
	}
	if (a.model == "") != (b.model == "") {
		return a.model == ""
	}
	return a.cpu > b.cpu
}

type pooledHeld struct {
	at   int64
	pool int
	pod  *trace.Pod
	seq  int
}

func heldFirst(a, b *pooledHeld) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}
