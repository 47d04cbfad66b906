// Package vertical recommends how large a task's limit of one resource
// should be (memory above all: a task over its memory limit is killed),
// from the task's own usage history. It is the pure core of Strata's
// vertical autoscaling: the simulator (`strata sim vertical`) and the
// cell's autoscaler feed it the same samples and get the same answers.
//
// A Task holds one task's history, downsampled into fixed windows (memory
// per task is fixed, about 2 KiB), and answers Recommend with a limit and
// its reason: the model it came from, the window, the margin, the kills it
// saw. Two models share the history and the task's burstiness picks one:
//
//   - steady: the peak over a short window (2 h) plus a small margin (2 %),
//     plus 0.7 × the largest three-minute rise of the last 12 h, so a task
//     whose use falls sheds its limit within hours and one that ramps stays
//     ahead of the ramp;
//   - bursty: a task whose usage jumps by 30 % of its peak or more and
//     falls back within ten minutes (remembered with a 48 h half-life) is
//     sized on its peak over a day, with a margin 2.5 times its burstiness
//     (at most the peak again): its next burst is not in its short history,
//     and its headroom is cheap because such tasks are small next to their
//     bursts.
//
// Samples may come at any rate and with gaps: the windows are fixed bucket
// counts over fixed spans, and they end at the newest sample (a gap in the
// telemetry never empties them; what a gap means is the caller's call).
//
// A kill for want of the resource (an OOM) raises the floor of every later
// recommendation at once, by 20 % of the limit it was killed at, doubling
// with every kill that follows another within a week: a limit never falls
// back to where it killed, so no task loops between a kill and a shrink. A
// task killed at MaxAllowed is reported (Recommendation.KilledAtMax), not
// resized again and again. MinAllowed and MaxAllowed bound every answer.
//
// The package never reads the clock, never does I/O and holds no
// goroutines: every time comes with a sample or a call, and the same
// samples always give the same recommendations. It must never act on a
// recommendation (resizing is the caller's) nor see other tasks.
package vertical
