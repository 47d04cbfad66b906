//go:build !race

package rollouts

const raceDetector = false
