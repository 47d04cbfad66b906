//go:build race

package rollouts

// raceDetector: the race detector slows the harness about fivefold; its
// tests run fewer seeds under it.
const raceDetector = true
