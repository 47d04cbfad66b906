// Package sharefit shows in the simulator what GPU-share sizing buys: how
// many pods like the GenAI trace's (each measured on a whole GPU, its duty
// cycle in pod_gpu_duty_cycle_anon.csv) fit on a cluster when each asks for
// a whole GPU, and when each asks for the share package autopilot/gpushare
// recommends from its duty cycle. Both runs submit the same pods in the
// same seeded order, one by one, never deleting any (the FGD paper's
// inflation shape), placed by FGD+; the difference in pods placed is the
// answer. The package is deterministic and does no I/O.
package sharefit
